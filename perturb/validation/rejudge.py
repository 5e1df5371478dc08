"""Level 1 where the running Python cannot judge a file: a project's newer syntax is no error of its variant.

Level 1 compiles each changed file under the Python running this tool. A project written for a newer one (PEP 695
type parameters, PEP 701 f-strings: 3.12) fails that compile in every changed file, the original's as much as the
variant's, and a project kept on an older one (`async` as a name before 3.7) likewise. So a file that fails here is
judged again where it can be judged:

- with the original tree at hand (`perturb validate`, `check-catalogue`, the sampler), under the first Python
  that compiles the original file: the running one, then the other installed Pythons, newest first (or the
  project's own, `judge`, where given). A file whose original no Python here compiles is no change's doing: its
  error is dropped and the file named as left to the tests;
- without it (a suite's task repository holds the variant alone), under the project's own Python (`judge`: the
  venv's interpreter the task's tests run with), whose verdict stands.

Every file judged elsewhere is named with the Python that judged it (`Judged.notes`): nothing is replaced silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from repoanchor.perturb.source.metadata_files import NEWEST_MINOR
from repoanchor.perturb.validation.compile_check import (
    CURRENT,
    check_with_interpreter,
    compile_sources,
    installed_interpreters,
    read_sources,
)


@dataclass
class Judged:
    errors: dict[str, str] = field(default_factory=dict)
    """{rel: error} of the changed files that do not compile where they can be judged."""
    notes: dict[str, str] = field(default_factory=dict)
    """{rel: how it was judged} of the files the running Python could not judge."""


def rejudged(errors: dict[str, str], variant: Path, original: Path | None, judge: str | None = None) -> Judged:
    """`errors` (the running Python's, {rel: error}) judged again where this Python cannot judge them."""
    if not errors or (original is None and judge is None):
        return Judged(dict(errors))
    if original is None:
        return _by_judge(errors, variant, judge)
    here = _judged_here(original, sorted(errors))
    result = Judged({rel: error for rel, error in errors.items() if rel in here})
    pending = sorted(set(errors) - set(here))
    for name, exe in _candidates(judge):
        if not pending:
            break
        originals = _failing(exe, original, pending)
        judgeable = [rel for rel in pending if rel not in originals]
        variants = _failing(exe, variant, judgeable)
        for rel in judgeable:
            if rel in variants:
                result.errors[rel] = f"{variants[rel]} (under {name}, which compiles the original)"
            else:
                result.notes[rel] = (
                    f"compiled under {name}: this Python ({_named(CURRENT)}) cannot compile its original"
                )
        pending = [rel for rel in pending if rel in originals]
    for rel in pending:
        result.notes[rel] = f"not compiled: no Python here compiles its original ({errors[rel]}); left to the tests"
    return result


def _by_judge(errors: dict[str, str], variant: Path, judge: str) -> Judged:
    """Without the original: the project's own Python decides, as its tests would."""
    failing = _failing(judge, variant, sorted(errors))
    result = Judged({rel: f"{failing[rel]} (under the project's Python, {judge})" for rel in failing})
    for rel in sorted(set(errors) - set(failing)):
        result.notes[rel] = f"compiled under the project's Python ({judge}): this one ({_named(CURRENT)}) cannot"
    return result


def _judged_here(original: Path, rels: list[str]) -> set[str]:
    """The files among `rels` the running Python judges: those whose original it compiles, and those the variant
    added (no original to excuse them)."""
    failing = compile_sources(read_sources(original, rels))  # an added file is not read, so never failing
    return {rel for rel in rels if rel not in failing}


def _failing(exe: str, root: Path, rels: list[str]) -> dict[str, str]:
    """{rel: error} of the files under `root` that `exe` does not compile (a missing file counts as failing)."""
    present = [rel for rel in rels if (root / rel).is_file()]
    errors = check_with_interpreter(exe, [root / rel for rel in present])
    by_rel = {Path(path).relative_to(root).as_posix(): error for path, error in errors.items()}
    return {**by_rel, **{rel: "missing" for rel in rels if rel not in present}}


def _candidates(judge: str | None) -> list[tuple[str, str]]:
    """(name, executable) of the Pythons to judge with: the project's own alone where given, else every other
    installed Python 3, newest first."""
    if judge is not None:
        return [(f"the project's Python ({judge})", judge)]
    versions = [(3, minor) for minor in range(NEWEST_MINOR, 5, -1) if (3, minor) != CURRENT]
    found = installed_interpreters(versions)
    return [(_named(version), found[version]) for version in versions if version in found]


def _named(version: tuple[int, int]) -> str:
    return f"Python {version[0]}.{version[1]}"
