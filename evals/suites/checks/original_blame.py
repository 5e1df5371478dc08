"""What the installed original says when a variant fails a check: the modules that fail to import there too (they
are excused), and whether a level-3 failure is the original's own (the rejection says so)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from repoanchor.evals.harness import instance_env
from repoanchor.evals.suites.checks.level1 import import_errors, install_for_imports
from repoanchor.evals.suites.checks.validate import level3_after, level3_before
from repoanchor.evals.suites.remap import Rejected

if TYPE_CHECKING:
    from repoanchor.evals.suites.instance import Work


def failing_in_original(work: Work, modules: dict[str, str]) -> set[str]:
    """Which of `modules` (that failed to import in a variant) fail in the installed original too.

    The original is installed and imported only when a variant's check fails, in one clone per instance,
    and each module's answer is kept: a variant that imports everything never pays for a second install."""
    unknown = {name: root for name, root in modules.items() if name not in work.imports_ok}
    if unknown:
        tree = work.root / "original-imports"
        with work.clock.stage("imports"):
            if not tree.exists():
                instance_env.checkout(work.original, work.row["base_commit"], tree)
                install_for_imports(tree, work.env, work.timeout)
            failing = import_errors(tree, unknown, work.env)
        work.imports_ok.update({name: name not in failing for name in unknown})
    return {name for name in modules if not work.imports_ok[name]}


def explain(work: Work, exc: Rejected) -> str:
    """A level-3 failure is blamed on the variant only if the original instance validates."""
    if exc.stage != "level3":
        return exc.reason
    if work.original_verdict is None:
        # A clone: tests and installs leave files behind, and later variants are copied from the original.
        check = instance_env.checkout(work.original, work.row["base_commit"], work.root / "original-check")
        try:
            with work.clock.stage("tests"):
                level3_before(check, work.row, work.env, work.timeout)
                level3_after(check, work.row, work.env, work.timeout)
            work.original_verdict = ""
        except Rejected as original:
            work.original_verdict = original.reason
    if not work.original_verdict:
        return exc.reason
    if work.original_verdict == exc.reason:  # said once: the same words twice read as two findings
        return f"{exc.reason}; the original instance fails too, the same way"
    return f"{exc.reason}; the original instance fails too ({work.original_verdict})"
