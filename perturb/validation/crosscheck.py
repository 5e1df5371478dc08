"""Compile a variant's changed files under other installed Pythons, and roll back what fails.

The oldest supported Python catches syntax too new for the project; the newest catches syntax
that was removed. Both run as one subprocess each, concurrently. A file changed only by
file-scope passes is restored from the source tree and its passes become `Failed`; a file a
tree transform wrote belongs to a multi-file transaction that cannot be undone one file at a
time, so it is reported as an integrity error (the sampler rejects such a variant).

Where the file passes left the oldest grammar, or every compile, to this check (`engine.transform_source`'s
`check`), a rejected file is first replayed with each pass's output compiled and its grammar parsed, so that
only the pass that brought the syntax in is rolled back (as when the passes check themselves); the replayed
file is compiled again under every interpreter, and restored if it still fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from repoanchor.perturb.results import Applied, Failed, Outcome
from repoanchor.perturb.validation.compile_check import CURRENT, check_with_interpreter, installed_interpreters

if TYPE_CHECKING:
    from repoanchor.perturb.engine import FileResult, OutputCheck
    from repoanchor.perturb.tree import TreeReport

NEWEST_CHECKED = (3, 13)
PART_BYTES = 2_000_000
"""Where the interpreters fill the cores, parts only even out their finishing times: worth an interpreter's start
(tens of milliseconds) from about a quarter of a second of compiling."""
IDLE_CORE_PART_BYTES = 250_000
"""Where a core would idle (fewer interpreters than cores), a part is worth a start sooner: flask's 1 MB of
changed files compiles under one interpreter in 0.14 s as two parts, 0.24 s as one."""

Replay = Callable[[list[str]], "dict[str, tuple[list[Outcome], FileResult]]"]
"""Files' passes run again with the grammar checked (in parallel, as the passes ran), each with its outcomes as
the report holds them."""


def check_other_interpreters(src: Path, out: Path, report: TreeReport, replay: Replay | None = None) -> None:
    interpreters = installed_interpreters(checked_versions(report.project.min_python))
    files = [out / rel for rel in report.changed_files if rel.endswith(".py") and (out / rel).is_file()]
    failing: dict[str, tuple[str, str]] = {}
    for version, errors in sorted(_compiled(interpreters, files).items()):
        report.interpreter_checks[f"{version[0]}.{version[1]}"] = len(files)
        for path, error in sorted(errors.items()):
            rel = Path(path).relative_to(out).as_posix()
            if rel not in report.changed_files or rel in failing:
                continue  # already rejected by the other interpreter
            if rel in report.tree_written or not (src / rel).is_file():
                report.integrity_errors.append(f"{rel} does not compile under {_named(version)}: {error}")
                continue
            failing[rel] = (_named(version), error)
    if replay is not None and failing:
        failing = _replayed(src, out, report, replay(sorted(failing)), interpreters, failing)
    for rel, (where, error) in sorted(failing.items()):
        shutil.copyfile(src / rel, out / rel)
        report.changed_files.remove(rel)
        _fail_file(report, rel, f"output does not compile under {where}, file rolled back: {error}")


def passes_check(check_interpreters: bool, oldest: tuple[int, int], tree_passes: bool) -> OutputCheck:
    """What the file passes compile their outputs under, given what this check will compile afterwards.

    Where the real oldest supported Python compiles the changed files, the passes need not parse each output
    under its grammar (`ast`'s grammar versions are best effort anyway: a PEP 614 decorator passes the 3.8
    grammar there and fails under Python 3.8). Where the newest compiles them too, and the running Python lies
    between the two, the passes compile nothing. Not where tree transforms follow: they would read, and could
    write into a multi-file transaction, a file that a compile here would have rolled back first. Where the project
    needs a newer Python than this one (3.12 syntax), nothing compiled here can judge its files: the passes compile
    nothing and that Python does (a file a tree transform wrote then fails as an integrity error, not silently)."""
    if check_interpreters and oldest > CURRENT and installed_interpreters([oldest]):
        return "none"  # the running Python cannot judge a newer one's syntax (PEP 695, PEP 701): the real one does
    if not (check_interpreters and oldest < CURRENT and installed_interpreters([oldest])):
        return "grammar"
    newest_later = CURRENT < NEWEST_CHECKED and installed_interpreters([NEWEST_CHECKED])
    return "none" if newest_later and not tree_passes else "current"


def checked_versions(min_python: tuple[int, int]) -> list[tuple[int, int]]:
    """The Pythons other than this one that a variant's changed files are compiled under, where installed."""
    return sorted({min_python, NEWEST_CHECKED} - {CURRENT})


def _compiled(interpreters: dict[tuple[int, int], str], files: list[Path]) -> dict[tuple[int, int], dict[str, str]]:
    """{version: {path: error}} of `files` compiled under each interpreter: each interpreter's files in parts
    (`part_count`, balanced by size), every part its own subprocess, as many at once as there are cores. One
    subprocess per interpreter left a core idle once the quicker interpreter was done (or, with one interpreter,
    all along); a small variant stays in one part, as each subprocess costs an interpreter's start."""
    sizes = {path: path.stat().st_size for path in files}
    parts = _parts(sizes, part_count(sum(sizes.values()), len(interpreters), os.cpu_count() or 1))
    jobs = [(version, exe, part) for version, exe in interpreters.items() for part in parts]
    with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        futures = [(version, pool.submit(check_with_interpreter, exe, part)) for version, exe, part in jobs]
    found: dict[tuple[int, int], dict[str, str]] = {version: {} for version in interpreters}
    for version, future in futures:
        found[version].update(future.result())
    return found


def part_count(total_bytes: int, interpreters: int, cores: int) -> int:
    """How many parts each interpreter's files are compiled in (one subprocess each): one per core at most."""
    least = PART_BYTES if interpreters >= cores else IDLE_CORE_PART_BYTES
    return min(cores, max(1, total_bytes // least))


def _parts(sizes: dict[Path, int], count: int) -> list[list[Path]]:
    """The files of `sizes` (path -> bytes) dealt into at most `count` parts of about equal size, largest first
    (each part in path order)."""
    parts: list[list[Path]] = [[] for _ in range(max(1, min(count, len(sizes))))]
    totals = [0] * len(parts)
    for path in sorted(sizes, key=lambda p: (-sizes[p], str(p))):
        lightest = totals.index(min(totals))
        parts[lightest].append(path)
        totals[lightest] += sizes[path]
    return [sorted(part) for part in parts]


def _replayed(
    src: Path,
    out: Path,
    report: TreeReport,
    replays: dict[str, tuple[list[Outcome], FileResult]],
    interpreters: dict[tuple[int, int], str],
    failing: dict[str, tuple[str, str]],
) -> dict[str, tuple[str, str]]:
    """Write the replayed files (restore those left with no pass) and compile them again: the files that still
    fail, each with the first interpreter that rejects it and its error (a file not replayed keeps its own)."""
    written = []
    for rel, (before, result) in sorted(replays.items()):
        _replace_outcomes(report, before, result.outcomes)
        if result.new_source is None:  # every pass rolled back or refused: the file is the source's again
            shutil.copyfile(src / rel, out / rel)
            report.changed_files.remove(rel)
        else:
            (out / rel).write_bytes(result.new_source)
            written.append(out / rel)
    still = {rel: failure for rel, failure in failing.items() if rel not in replays}
    for version, errors in sorted(_compiled(interpreters, written).items()):
        for path, error in sorted(errors.items()):
            still.setdefault(Path(path).relative_to(out).as_posix(), (_named(version), error))
    return still


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
