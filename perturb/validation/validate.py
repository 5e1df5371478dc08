"""Semantic validation, levels 1 and 2: changed files compile, and per-test outcomes are identical.

A variant is only worth an agent's time if it provably behaves like the original. We prove it
the cheap way that still convinces: run the project's own suite on both trees (`testrun`) and
compare every test's outcome. Every run is made in a fresh copy of its tree (`run_copied`): the original
and the variant run alike (the runner's own files, nothing left by an earlier run), and no test writes
into a tree it was given. The baseline may be repeated; tests whose outcome varies between
baseline runs are flaky, listed, and left out of the comparison. The variant runs once: a flaky
test the baseline missed can only cause a false rejection, never a false acceptance, and a
rejected variant is cheap to redraw. With `recheck`, a variant that changed tests is run again beside
the original (`recheck.py`), so a change that does not repeat is told apart from one that does.
"""

from __future__ import annotations

import filecmp
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from repoanchor.perturb.source.files import copy_source_tree
from repoanchor.perturb.validation.compile_check import compile_sources, read_sources
from repoanchor.perturb.validation.recheck import recheck_changes
from repoanchor.perturb.validation.rejudge import Judged, rejudged
from repoanchor.perturb.validation.testrun import InfrastructureError, TestRun, junit_command, parse_junit, run_tests

# Running one suite lives in `testrun`; its API is re-exported so callers need one module.
__all__ = [
    "Baseline",
    "InfrastructureError",
    "TestRun",
    "ValidationReport",
    "changed_files",
    "compare",
    "compile_errors",
    "junit_command",
    "parse_junit",
    "run_baseline",
    "run_copied",
    "run_tests",
    "validate",
]

IGNORED_DIRS = {"__pycache__", ".git"}


@dataclass(frozen=True)
class Baseline:
    """Repeated runs of the original tree; computed once, reusable across many variants."""

    test_cmd: str
    runs: list[TestRun]

    @property
    def flaky(self) -> set[str]:
        """Tests whose outcome (or presence) differs between baseline runs."""
        ids = set().union(*(run.outcomes for run in self.runs))
        return {t for t in ids if len({run.outcomes.get(t) for run in self.runs}) > 1}

    @property
    def outcomes(self) -> dict[str, str]:
        """The outcome of every stable test, identical in all runs by construction."""
        flaky = self.flaky
        return {t: o for t, o in self.runs[0].outcomes.items() if t not in flaky}

    @property
    def unstable_ids(self) -> set[str]:
        """Parametrized tests whose ids themselves differ between runs (marshmallow parametrizes with the time of
        collection, `test_x[09:27:40 2026-12-06]`): by the part before `[`. Each of their ids is flaky, a
        variant's new ones included, which no baseline run can have seen."""
        present = [set(run.outcomes) for run in self.runs]
        varying = set().union(*present) - set.intersection(*present)
        return {unparametrized(t) for t in varying if "[" in t}


def unparametrized(test_id: str) -> str:
    """A test id without its parametrization (`file::test[a-b]` -> `file::test`)."""
    return test_id.split("[", 1)[0]


@dataclass
class ValidationReport:
    """What differential testing found; `ok` only when nothing changed and everything compiled."""

    original: str
    variant: str
    test_cmd: str
    repeat: int
    n_tests: int = 0
    n_compared: int = 0
    flaky: list[str] = field(default_factory=list)
    changed: list[dict[str, str]] = field(default_factory=list)
    unconfirmed: list[dict[str, str]] = field(default_factory=list)
    """Changes the variant's second run did not repeat (`recheck.py`): still no proof, so not `ok`."""
    recheck_error: str | None = None
    missing: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    compile_errors: dict[str, str] = field(default_factory=dict)
    compile_notes: dict[str, str] = field(default_factory=dict)
    """Changed files the running Python could not judge, and how each was judged (`rejudge.py`)."""
    changed_files: int = 0
    infra_error: str | None = None
    durations: dict[str, float | list[float]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        failures = (self.changed, self.unconfirmed, self.missing, self.added, self.compile_errors)
        return not (self.infra_error or any(failures))

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "ok": self.ok}, indent=2)


def run_baseline(original: Path, test_cmd: str, *, repeat: int = 1, timeout: float = 1800) -> Baseline:
    """Run the original `repeat` times; an empty suite, or one whose every outcome is an error, is an error, since
    it would prove nothing."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    runs = [run_copied(original, test_cmd, timeout=timeout) for _ in range(repeat)]
    if not any(run.outcomes for run in runs):
        run = runs[0]
        raise InfrastructureError(
            f"{run.tree}: {run.command!r} ran no tests (exit {run.exit_code}); stderr: {run.stderr_tail[-500:]}"
        )
    if all(outcome == "error" for run in runs for outcome in run.outcomes.values()):
        run = runs[0]  # e.g. pytest stopped by a collection error: the same error in a variant would read "unchanged"
        raise InfrastructureError(
            f"{run.tree}: {run.command!r} ran no test to its end: its {len(run.outcomes)} outcome(s) are all errors "
            f"({', '.join(sorted(run.outcomes)[:3])}; a module that cannot be collected, or a setup that fails, "
            f"stops them); output: {(run.stdout_tail or run.stderr_tail)[-500:]}"
        )
    return Baseline(test_cmd, runs)


def run_copied(tree: Path, test_cmd: str, *, timeout: float) -> TestRun:
    """`run_tests` in a fresh copy of `tree` (`copy_source_tree`: no VCS folder, cache or bytecode), named as `tree`.

    A test that writes beside itself (a doctest saving `file.txt` in the working directory) could otherwise
    pass in a copy it owns and fail in a tree another user owns, or see what an earlier run left: the change
    would be blamed on the variant. Test ids holding the copy's path are written with `testrun.TREE_MARK`."""
    tree = Path(tree).resolve()
    with tempfile.TemporaryDirectory(prefix="repoanchor-tests-") as scratch:
        copy = Path(scratch) / "tree"  # one path length for every tree: pytest shortens long parametrized ids
        copy_source_tree(tree, copy)
        try:
            run = run_tests(copy, test_cmd, timeout=timeout)
        except InfrastructureError as exc:  # named by the tree it copies, not by the copy, gone once it returns
            message = str(exc).replace(f"{copy.resolve()}:", f"{tree} (run in a fresh copy):", 1)
            raise InfrastructureError(message) from None
    return replace(run, tree=str(tree))


def _files(root: Path) -> dict[str, Path]:
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in names:
            path = Path(folder) / name
            found[path.relative_to(root).as_posix()] = path
    return found


def changed_files(original: Path, variant: Path) -> list[str]:
    """Relative paths added, removed or differing by bytes between the two trees."""
    before, after = _files(original), _files(variant)
    return sorted(
        rel
        for rel in before.keys() | after.keys()
        if rel not in before or rel not in after or not filecmp.cmp(before[rel], after[rel], shallow=False)
    )


def compile_errors(variant: Path, files: list[str], original: Path | None = None, judge: str | None = None) -> Judged:
    """Level 1: each changed .py file of the variant compiles under the running interpreter, or, where this one
    cannot judge it (a newer Python's syntax), where it can be judged (`rejudge.py`: under a Python that compiles
    the `original`'s file, or the project's own, `judge`)."""
    return rejudged(compile_sources(read_sources(variant, files)), variant, original, judge)


def compare(baseline: dict[str, str], variant: dict[str, str]) -> tuple[list, list, list]:
    """(changed, missing, added) between baseline and variant outcomes, flaky tests already removed."""
    changed = [
        {"test": t, "original": baseline[t], "variant": variant[t]}
        for t in sorted(baseline.keys() & variant.keys())
        if baseline[t] != variant[t]
    ]
    missing = sorted(baseline.keys() - variant.keys())
    added = sorted(variant.keys() - baseline.keys())
    return changed, missing, added


def validate(
    original: Path,
    variant: Path,
    test_cmd: str,
    *,
    repeat: int = 1,
    timeout: float = 1800,
    baseline: Baseline | None = None,
    recheck: bool = False,
) -> ValidationReport:
    """Levels 1 and 2 for one variant; pass `baseline` to reuse the original's runs across variants, and `recheck`
    to run both trees again when tests changed (`recheck.py`)."""
    original, variant = Path(original).resolve(), Path(variant).resolve()
    if baseline is not None and baseline.test_cmd != test_cmd:
        raise ValueError(f"baseline was run with {baseline.test_cmd!r}, not {test_cmd!r}")
    report = ValidationReport(str(original), str(variant), test_cmd, len(baseline.runs) if baseline else repeat)
    start = time.monotonic()
    files = changed_files(original, variant)
    judged = compile_errors(variant, files, original)
    report.changed_files, report.compile_errors, report.compile_notes = len(files), judged.errors, judged.notes
    report.durations["compile"] = time.monotonic() - start
    if report.compile_errors:
        return report  # level 1 already rejects the variant; a full suite run would add nothing
    try:
        baseline = baseline or run_baseline(original, test_cmd, repeat=repeat, timeout=timeout)
        report.durations["baseline"] = [run.duration for run in baseline.runs]
        run = run_copied(variant, test_cmd, timeout=timeout)
        report.durations["variant"] = run.duration
    except InfrastructureError as exc:
        report.infra_error = str(exc)
        return report
    unstable = baseline.unstable_ids
    flaky = baseline.flaky | {t for t in run.outcomes if unparametrized(t) in unstable}
    stable = {t: o for t, o in baseline.outcomes.items() if unparametrized(t) not in unstable}
    variant_outcomes = {t: o for t, o in run.outcomes.items() if t not in flaky}
    report.flaky = sorted(flaky | {t for t in baseline.outcomes if t not in stable})
    report.changed, report.missing, report.added = compare(stable, variant_outcomes)
    report.n_tests = len(stable.keys() | flaky | run.outcomes.keys())
    report.n_compared = len(stable.keys() | variant_outcomes.keys())
    if recheck:
        recheck_changes(report, original, variant, lambda tree: run_copied(tree, test_cmd, timeout=timeout))
    return report
