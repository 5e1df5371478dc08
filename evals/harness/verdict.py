"""Pure grading: per-test outcomes from a stored log, and SWE-bench's verdict on them. No checkout, no
subprocess: `grade_runs`, the image provider and any later regrading read the same functions."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from repoanchor.evals.harness import eval_script

RunStatus = Literal["completed", "patch_apply_failed", "test_patch_apply_failed", "timeout"]


class TestRun(BaseModel):
    instance_id: str
    status: RunStatus
    outcomes: dict[str, str]
    """Test id -> swebench status (PASSED, FAILED, SKIPPED, ERROR, XFAIL)."""
    log: str
    seconds: float = 0.0


class TestGroup(BaseModel):
    success: list[str] = []
    failure: list[str] = []


class Grade(BaseModel):
    instance_id: str
    resolved: bool
    status: str
    """RESOLVED_FULL / RESOLVED_PARTIAL / RESOLVED_NO, or the run status when the tests never ran."""
    f2p: TestGroup
    p2p: TestGroup


def patched_files(patch: str) -> list[str]:
    return sorted(set(re.findall(r"^diff --git a/.* b/(.*)$", patch, flags=re.MULTILINE)))


def outcomes_from_log(row: dict[str, Any], log: str) -> dict[str, str]:
    """Per-test statuses from a stored log, as swebench's `get_logs_eval` reads them ({} if tests never ran)."""
    section = eval_script.output_section(log)
    if section is None:
        return {}
    parse = eval_script.log_parser(row)
    # swebench falls back to the whole log when nothing is found between the markers.
    return parse(section) or parse(log)


def grade(row: dict[str, Any], outcomes: dict[str, str], status: str = "completed") -> Grade:
    """SWE-bench's verdict: every FAIL_TO_PASS and PASS_TO_PASS test passes (or, for fail-only repos, none fails)."""
    from swebench.harness.constants import FAIL_ONLY_REPOS, FAIL_TO_PASS, PASS_TO_PASS, EvalType, ResolvedStatus
    from swebench.harness.grading import get_eval_tests_report, get_resolution_status

    eval_type = row.get("eval_type") or ("fail_only" if row["repo"] in FAIL_ONLY_REPOS else "pass_and_fail")
    gold = {FAIL_TO_PASS: row["FAIL_TO_PASS"], PASS_TO_PASS: row["PASS_TO_PASS"]}
    report = get_eval_tests_report(outcomes, gold, eval_type=EvalType(eval_type))
    verdict = get_resolution_status(report) if status == "completed" else status
    return Grade(
        instance_id=row["instance_id"],
        resolved=verdict == ResolvedStatus.FULL.value,
        status=verdict,
        f2p=TestGroup(**report[FAIL_TO_PASS]),
        p2p=TestGroup(**report[PASS_TO_PASS]),
    )


def grade_run(row: dict[str, Any], run: TestRun) -> Grade:
    """Grade a stored run again from its log alone."""
    return grade(row, outcomes_from_log(row, run.log) if run.status == "completed" else {}, run.status)
