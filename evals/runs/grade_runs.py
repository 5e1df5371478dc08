"""Grade a run matrix from its files alone: each finished unit's patch against its task's ground truth.

Separate from running and redoable: a unit's grade is `units/<unit_id>/grade.json` (atomic), computed from
the unit's final `patch.diff` and the suite folder's `ground_truth/` — SWE-bench resolution
(FAIL_TO_PASS ∪ PASS_TO_PASS) for Perturb/SPT/original tasks, the family's dynamic validator for Extend
tasks. The patch is applied to a throwaway clone of the task repository, never to the suite; the clones
live under the matrix's `.grading/` folder, which one grading process holds at a time and which is
emptied when grading starts, so a killed grade leaves nothing behind for long. Units that ended in an
infrastructure error or crashed are not graded (`graded: false`, with the reason), so they never count
as agent failures.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from repoanchor.evals.harness.container_run import choose_provider
from repoanchor.evals.harness.failpoints import failpoint
from repoanchor.evals.harness.grading import grade, run_tests
from repoanchor.evals.harness.patch_guard import Policy, guard
from repoanchor.evals.harness.suite_format import TASKS_FILE, ground_truth_file
from repoanchor.evals.runs.matrix import MatrixConfig, Unit, expand
from repoanchor.evals.runs.run_matrix import GRADE, RESULT, UNITS, read_result, write_json_atomic
from repoanchor.evals.runs.run_one import warn_once

SCRATCH = ".grading"


def unit_patch(folder: Path, result: dict) -> str:
    """The final attempt's patch (the run folder keeps it as patch.diff)."""
    final = folder / result["attempts"][-1]["dir"] / "patch.diff"
    return final.read_text(encoding="utf-8") if final.is_file() else ""


def ground_truth(unit: Unit) -> dict:
    """`SUITE/ground_truth/<task id>.json` (suite_format), SUITE being the folder of tasks.jsonl that holds the
    task's repository: keyed by the task, as the suite's other readers key it, wherever in the suite its row puts
    the repository (`repos/<task>` as the builders write it, or a folder several tasks share)."""
    repo = Path(unit.task.repo)
    suite = next((folder for folder in repo.parents if (folder / TASKS_FILE).is_file()), None)
    if suite is None:  # an ad-hoc task outside any suite
        raise FileNotFoundError(f"{repo}: in no suite folder")
    return json.loads(ground_truth_file(suite, unit.instance_id).read_text(encoding="utf-8"))


def grade_unit(
    unit: Unit, result: dict, folder: Path, cache_dir: Path | None, scratch_root: Path, provider: str = "auto",
    test_edits: Policy = "strip",
) -> dict:  # fmt: skip
    record, truth, patch = grade_inputs(unit, result, folder)
    if truth is None:
        return record
    return judge(unit, record, truth, patch, cache_dir, scratch_root, provider, test_edits)


def grade_inputs(unit: Unit, result: dict, folder: Path) -> tuple[dict, dict | None, str]:
    """(the grade's identifying fields, the task's ground truth, the final patch), read from the driver's files.
    Without ground truth the record is already the whole grade: the unit is not graded, and says why."""
    record = {"unit_id": unit.unit_id, "suite": unit.suite, "instance_id": unit.instance_id}
    if result.get("status") != "done":
        return _ungraded(record, f"not graded: unit {result.get('status')}"), None, ""
    try:
        truth = ground_truth(unit)
    except FileNotFoundError:  # the stand-in suite of runs imported without --suite: ungraded, not failed
        return _ungraded(record, "not graded: no ground truth for the task"), None, ""
    return record, truth, unit_patch(folder, result)


def _ungraded(record: dict, reason: str) -> dict:
    return {**record, "graded": False, "resolved": None, "reason": reason}


def judge(
    unit: Unit, record: dict, truth: dict, patch: str, cache_dir: Path | None, scratch_root: Path, provider: str,
    test_edits: Policy,
) -> dict:  # fmt: skip
    """The grade of `patch`: needs only the task's repository (unit.task.repo), never the matrix's folders."""
    graded = {**record, "graded": True, "patch_lines": len(patch.splitlines())}
    # The tests and what steers them are the grader's, not the candidate's (Extend's families run them too).
    guarded = guard(patch, test_edits)
    graded |= {"test_edit_policy": test_edits, "test_edits": guarded.touched}
    if guarded.refused:
        return {**graded, "resolved": False, "status": "patch_touches_tests", "provider": None}
    chosen, fallback = choose_provider(truth["row"], provider)
    if fallback:
        warn_once(fallback)
    scratch = Path(tempfile.mkdtemp(prefix="grade-", dir=scratch_root))
    failpoint("grade.scratch-made", unit.unit_id)
    try:
        grader = _grade_extend if truth.get("extend") else _grade_swebench
        verdict = grader(unit, truth, guarded.patch, scratch, cache_dir, chosen)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {**graded, **verdict, "provider": chosen, "provider_note": fallback}


def _grade_swebench(unit: Unit, truth: dict, patch: str, scratch: Path, cache_dir: Path | None, provider: str) -> dict:
    from repoanchor.evals.suites.checks.validate import clone, suite_env

    check = clone(Path(unit.task.repo), scratch / "check")
    env = suite_env(truth, check, cache_dir, provider, private_venv=scratch / "venv")
    run = run_tests(check, truth["row"], patch, env)
    result = grade(truth["row"], run.outcomes, run.status)
    verdict = {"resolved": result.resolved, "status": result.status, **result.model_dump(include={"f2p", "p2p"})}
    return {**verdict, "image": env.image}


def _grade_extend(unit: Unit, truth: dict, patch: str, scratch: Path, cache_dir: Path | None, provider: str) -> dict:
    from repoanchor.evals.harness.grading import apply_patch
    from repoanchor.evals.suites.checks.validate import clone
    from repoanchor.evals.suites.extend import validate_extend
    from repoanchor.evals.suites.extend.suite import extend_task_from_truth

    worktree = clone(Path(unit.task.repo), scratch / "check")
    applied, log = apply_patch(worktree, patch) if patch.strip() else (True, "")  # git alone, on the host
    if not applied:
        return {"resolved": False, "status": "patch_apply_failed", "reasons": [log[-2000:]]}
    task, grade_answer = extend_task_from_truth(
        Path(unit.task.repo), truth, scratch, cache_dir, provider, private_venv=scratch / "venv"
    )
    verdict = validate_extend(task, worktree, grader=grade_answer)
    image = task.validator.image if task.validator else None
    return {"resolved": verdict.passed, "status": "completed", "reasons": verdict.reasons, "image": image}


Judged = tuple[Unit, dict, dict, str]
"""A unit to judge: (unit, its grade's identifying fields, its ground truth, its final patch)."""
GradeMany = Callable[[list[Judged], str, Policy, Callable[[Unit, dict], None]], None]
"""Judges every item (provider, test-edit policy as given) and hands each grade to the callback as it is made;
the default judges them here one by one, `grade_ray.RayGrader` on a Ray cluster."""


def grade_matrix(
    config: MatrixConfig, *, redo: bool = False, cache_dir: Path | None = None, provider: str = "auto",
    test_edits: Policy = "strip", grade_many: GradeMany | None = None,
) -> list[dict]:  # fmt: skip
    """Grade every finished unit without a grade (all with `redo`); returns every grade, in unit order.

    `provider`: `image` runs each grade in a network-less container of the task's environment image, `local`
    on the host (isolated), `auto` (the default) the image where one is built, else local with a warning;
    each grade records where it ran. `test_edits`: what becomes of a patch's changes to tests, conftest.py,
    plugins and pytest configuration (`patch_guard`); a grade made under another policy is made again.
    `grade_many`: where the grades are made (see GradeMany); this process alone writes grade.json files."""
    root = Path(config.out) / UNITS
    with _scratch(Path(config.out)) as scratch_root:
        finished = _finished(config, root, redo, test_edits)
        made: dict[str, dict] = {}

        def keep(unit: Unit, grade: dict) -> None:
            write_json_atomic(root / unit.unit_id / GRADE, grade)
            failpoint("grade.written", unit.unit_id)
            made[unit.unit_id] = grade

        todo = []
        for unit, result, existing in finished:
            if existing is None:
                record, truth, patch = grade_inputs(unit, result, root / unit.unit_id)
                if truth is None:  # not graded, and the record says why
                    keep(unit, record)
                else:
                    todo.append((unit, record, truth, patch))
        if grade_many is None:
            for unit, record, truth, patch in todo:
                keep(unit, judge(unit, record, truth, patch, cache_dir, scratch_root, provider, test_edits))
        else:
            grade_many(todo, provider, test_edits, keep)
    return [_row(unit, result, existing or made[unit.unit_id]) for unit, result, existing in finished]


def _finished(config: MatrixConfig, root: Path, redo: bool, test_edits: Policy) -> list[tuple[Unit, dict, dict | None]]:
    """(unit, result, its grade if one stands) for every unit with a result, in unit order."""
    finished = []
    for unit in expand(config):
        result = read_result(root / unit.unit_id / RESULT)
        if result is None:
            continue
        existing = None if redo else _read(root / unit.unit_id / GRADE)
        if existing is not None and existing.get("test_edit_policy", test_edits) != test_edits:
            existing = None
        finished.append((unit, result, existing))
    return finished


def _row(unit: Unit, result: dict, grade: dict) -> dict:
    return {
        **grade,
        "scaffold": unit.scaffold,
        "model": unit.model,
        "condition": unit.condition,
        "repeat": unit.repeat,
        "exit_status": result.get("exit_status"),
        "cost": result.get("cost"),
        "steps": (result.get("summary") or {}).get("steps"),
    }


@contextmanager
def _scratch(out: Path) -> Iterator[Path]:
    """The matrix's scratch folder for grading, held by this process and emptied of a killed grade's clones."""
    scratch = out / SCRATCH
    scratch.mkdir(parents=True, exist_ok=True)
    with (scratch / "lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"{out} is being graded by another process") from None
        _empty(scratch)
        try:
            yield scratch
        finally:
            _empty(scratch)


def _empty(scratch: Path) -> None:
    for path in scratch.iterdir():
        if path.name != "lock":
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):  # absent or torn: grade again
        return None
