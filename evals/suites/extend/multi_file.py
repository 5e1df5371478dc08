"""Multi-File Issue Resolution: the original issue, on the variant, for gold patches touching > 1 file.

Nothing is erased. The agent may change any non-test file (a test file is one matching
`perturb.source.files.TEST_PATTERNS` or touched by the instance's test patch). Grading is SWE-bench's
(FAIL_TO_PASS and PASS_TO_PASS with the test patch applied), which this package does not run
itself: the caller passes a *grader* — ``grader(task, worktree, ground_truth) ->
ValidationResult`` — to `validate_extend`, and the suite builder wires the real one. The ground
truth holds the test patch, the test lists and, when the caller has it, the gold patch remapped
onto the variant; with both a remapped gold patch and a grader the task is self-checked like
the others (the decoy is the gold patch without its last file: a multi-file task that one
file fewer also solves is rejected), otherwise its self-check is recorded as deferred.
"""

from __future__ import annotations

import re
from pathlib import Path

from repoanchor.evals.suites.extend.base import BuildContext, Plan
from repoanchor.evals.suites.extend.models import ValidatorSpec
from repoanchor.prompts import render

_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def patch_files(patch: str) -> list[str]:
    """Paths a unified git diff touches, in order, each once (both sides of a rename)."""
    seen: dict[str, None] = {}
    for before, after in _DIFF_HEADER.findall(patch or ""):
        seen.setdefault(before)
        seen.setdefault(after)
    return [p for p in seen if p != "/dev/null"]


def touched_python_files(patch: str) -> list[str]:
    return [p for p in patch_files(patch) if p.endswith(".py")]


class MultiFile:
    name = "multi_file"

    def plan(self, ctx: BuildContext) -> Plan | str:
        touched = touched_python_files(ctx.row.get("patch", ""))
        need = ctx.config.multi_file.min_files
        if len(touched) < need:
            return f"the gold patch touches {len(touched)} Python file(s), need {need}"
        prompt = render("extend/multi_file", problem_statement=ctx.row["problem_statement"])
        gt = {
            "touched_files": touched,
            "test_patch": ctx.row.get("test_patch", ""),
            "test_files": patch_files(ctx.row.get("test_patch", "")),
            "FAIL_TO_PASS": ctx.row.get("FAIL_TO_PASS"),
            "PASS_TO_PASS": ctx.row.get("PASS_TO_PASS"),
            "solution": {"patch": ctx.gold_patch} if ctx.gold_patch else None,
        }
        return Plan(None, prompt, gt, needs_tests=False)

    def check(self, worktree: Path, gt: dict, spec: ValidatorSpec) -> list[str]:
        raise NotImplementedError("multi_file is graded by the grader passed to validate_extend")

    def decoy(self, gt: dict) -> dict:
        """The gold patch without the diff of its last file."""
        patch = gt["solution"]["patch"]
        starts = [m.start() for m in _DIFF_HEADER.finditer(patch)]
        return {"patch": patch[: starts[-1]] if len(starts) > 1 else ""}
