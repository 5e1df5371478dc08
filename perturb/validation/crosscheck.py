"""Compile a variant's changed files under other installed Pythons, and roll back what fails.

The oldest supported Python catches syntax too new for the project; the newest catches syntax
that was removed. Both run as one subprocess each, concurrently. A file changed only by
file-scope passes is restored from the source tree and its passes become `Failed`; a file a
tree transform wrote belongs to a multi-file transaction that cannot be undone one file at a
time, so it is reported as an integrity error (the sampler rejects such a variant).

Where the file passes left the oldest grammar to this check (`engine.transform_source`'s `grammar`),
a rejected file is first replayed with that grammar parsed after each pass, so that only the pass
that brought the syntax in is rolled back (as when the grammar is checked in the passes themselves);
the replayed file is compiled again under every interpreter, and restored if it still fails.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from repoanchor.perturb.results import Applied, Failed, Outcome
from repoanchor.perturb.validation.compile_check import CURRENT, check_with_interpreter, installed_interpreters

if TYPE_CHECKING:
    from repoanchor.perturb.engine import FileResult
    from repoanchor.perturb.tree import TreeReport

NEWEST_CHECKED = (3, 13)

Replay = Callable[[str], "tuple[list[Outcome], FileResult] | None"]
"""A file's outcomes as the report holds them, and its passes run again with the grammar checked; None when
its passes already checked it."""


def check_other_interpreters(src: Path, out: Path, report: TreeReport, replay: Replay | None = None) -> None:
    interpreters = installed_interpreters(checked_versions(report.project.min_python))
    files = [out / rel for rel in report.changed_files if rel.endswith(".py") and (out / rel).is_file()]
    with ThreadPoolExecutor(max_workers=max(1, len(interpreters))) as pool:
        results = {v: pool.submit(check_with_interpreter, exe, files) for v, exe in interpreters.items()}
    replayed: set[str] = set()
    for version, future in sorted(results.items()):
        where = _named(version)
        report.interpreter_checks[f"{version[0]}.{version[1]}"] = len(files)
        for path, error in sorted(future.result().items()):
            rel = Path(path).relative_to(out).as_posix()
            if rel not in report.changed_files or rel in replayed:
                continue  # already rolled back (or replayed) for the other interpreter
            if rel in report.tree_written or not (src / rel).is_file():
                report.integrity_errors.append(f"{rel} does not compile under {where}: {error}")
                continue
            if replay is not None and (again := replay(rel)) is not None:
                replayed.add(rel)
                if (still := _replayed(src, out, report, rel, again, interpreters)) is None:
                    continue
                where, error = still
            shutil.copyfile(src / rel, out / rel)
            report.changed_files.remove(rel)
            _fail_file(report, rel, f"output does not compile under {where}, file rolled back: {error}")


def oldest_compiled_later(check_interpreters: bool, oldest: tuple[int, int]) -> bool:
    """Whether the real oldest supported Python will compile the changed files, so that the file passes need not
    parse each output under its grammar (`ast`'s grammar versions are best effort anyway: a PEP 614 decorator
    passes the 3.8 grammar there and fails under Python 3.8)."""
    return check_interpreters and oldest < CURRENT and bool(installed_interpreters([oldest]))


def checked_versions(min_python: tuple[int, int]) -> list[tuple[int, int]]:
    """The Pythons other than this one that a variant's changed files are compiled under, where installed."""
    return sorted({min_python, NEWEST_CHECKED} - {CURRENT})


def _replayed(
    src: Path,
    out: Path,
    report: TreeReport,
    rel: str,
    again: tuple[list[Outcome], FileResult],
    interpreters: dict[tuple[int, int], str],
) -> tuple[str, str] | None:
    """Write the replayed file (or restore it, where no pass is left) and compile it again: None when it now
    compiles everywhere, else the interpreter that still rejects it and its error."""
    before, result = again
    _replace_outcomes(report, before, result.outcomes)
    if result.new_source is None:  # every pass rolled back or refused: the file is the source's again
        shutil.copyfile(src / rel, out / rel)
        report.changed_files.remove(rel)
        return None
    (out / rel).write_bytes(result.new_source)
    for version, exe in sorted(interpreters.items()):
        error = check_with_interpreter(exe, [out / rel]).get(str(out / rel))
        if error:
            return _named(version), error
    return None


def _replace_outcomes(report: TreeReport, before: list[Outcome], after: list[Outcome]) -> None:
    """`after` where the report holds `before` (one file's outcomes, side by side in the report)."""
    old = {id(outcome) for outcome in before}
    places = [i for i, outcome in enumerate(report.outcomes) if id(outcome) in old]
    at = places[0] if places else len(report.outcomes)
    kept = [outcome for outcome in report.outcomes if id(outcome) not in old]
    report.outcomes = kept[:at] + list(after) + kept[at:]


def _named(version: tuple[int, int]) -> str:
    return f"Python {version[0]}.{version[1]}"


def _fail_file(report: TreeReport, rel: str, reason: str) -> None:
    report.outcomes = [
        Failed(o.transform, o.file, reason) if isinstance(o, Applied) and o.file == rel else o for o in report.outcomes
    ]
