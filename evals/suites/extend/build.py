"""Build the Extend tasks of one instance, validate an answer, and prove every task solvable.

`build_extend_tasks` works on a private copy of the validated variant; for each requested family
it plans the erasure, writes ``out_dir/repos/<task_id>/`` (the erased tree as a git repository
with one fresh commit) and ``out_dir/ground_truth/<task_id>.json`` (never inside the repo), then
self-checks the task in disposable clones: the validator must accept the ground truth and reject
no change, a decoy answer and the ground truth plus an edit outside the allowed files, each for
the right reason (the stage that failed). A task failing that is returned as ``rejected`` with
the reason and its files are removed; a family without enough material is ``skipped``.

`validate_extend` runs the stages in order and stops at the first failure: scope (changed
paths, untracked included, against the task's commit; nothing has run in the worktree yet),
the family's dynamic check in the variant's Python, then the project's tests (every test
passing on the intact variant must still pass). multi_file uses the caller's grader instead.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from repoanchor.evals.suites.extend.base import BuildContext, Family, apply_edit
from repoanchor.evals.suites.extend.common import (
    ExtendError,
    clone,
    copy_tree,
    read_json,
    write_json,
)
from repoanchor.evals.suites.extend.missing_constant import MissingConstant
from repoanchor.evals.suites.extend.models import (
    FAMILIES,
    FAMILY_NUMBER,
    CaseResult,
    ExtendTask,
    FamiliesConfig,
    SelfCheck,
    ValidationResult,
    ValidatorSpec,
)
from repoanchor.evals.suites.extend.multi_file import MultiFile
from repoanchor.evals.suites.extend.project_tests import run_project_tests, tests_reasons
from repoanchor.evals.suites.extend.proxy_chain import ProxyChain
from repoanchor.evals.suites.extend.runtime_target import RuntimeTarget
from repoanchor.evals.suites.extend.scope import ScopeError, changed_paths, scope_violations
from repoanchor.evals.suites.stage_clock import StageClock, timed
from repoanchor.perturb.source.files import is_test_file, source_files
from repoanchor.perturb.variant_git import carry_version_tag, init_single_commit

Grader = Callable[[ExtendTask, Path, dict], ValidationResult]
FAMILY_IMPL: dict[str, Family] = {f.name: f for f in (ProxyChain(), RuntimeTarget(), MissingConstant(), MultiFile())}
OUT_OF_SCOPE_NOTE = "\n# local note\n"
MAX_REASONS = 12


def build_extend_tasks(
    variant_tree: Path,
    metadata: dict,
    row: dict,
    out_dir: Path,
    *,
    families_config: FamiliesConfig | None = None,
    seed: int | str = 0,
    gold_patch: str | None = None,
    grader: Grader | None = None,
    clock: StageClock | None = None,
) -> list[ExtendTask]:
    """One record per requested family (ok, skipped or rejected); see the module docstring. `clock` (a suite
    build's) times each family's plan, erasure and commit as `perturbation`, its self-check as `tests`."""
    config = families_config or FamiliesConfig()
    out_dir = Path(out_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="repoanchor-extend-") as tmp:
        intact = Path(tmp) / "variant"
        if (Path(variant_tree) / ".git").exists():  # a clone keeps the history and tags versioning tools read
            clone(Path(variant_tree), intact)
        else:
            copy_tree(Path(variant_tree), intact)
        ctx = BuildContext(intact, Path(variant_tree), metadata, row, config, seed, gold_patch, clock)
        return [_build_one(FAMILY_IMPL[name], ctx, out_dir, grader) for name in (config.families or FAMILIES)]


def _build_one(family: Family, ctx: BuildContext, out_dir: Path, grader: Grader | None) -> ExtendTask:
    with timed(ctx.clock, "perturbation"):  # tests run while planning (the baseline) are subtracted
        task = _make_task(family, ctx, out_dir)
    if task.status != "ok" or not ctx.config.self_check:
        return task
    with timed(ctx.clock, "tests"):
        check = self_check(task, grader=grader)
    if check.status == "failed":
        _remove(Path(task.repo), Path(task.ground_truth))
        return task.model_copy(update={"status": "rejected", "reason": check.reason, "self_check": check})
    return task.model_copy(update={"self_check": check})


def _make_task(family: Family, ctx: BuildContext, out_dir: Path) -> ExtendTask:
    """The family's task written out (repository and ground truth), not yet self-checked."""
    task_id = f"{ctx.instance_id}__extend-{FAMILY_NUMBER[family.name]}"
    base = {"task_id": task_id, "instance_id": ctx.instance_id, "family": family.name}
    repo, truth = out_dir / "repos" / task_id, out_dir / "ground_truth" / f"{task_id}.json"
    _remove(repo, truth)  # a rebuild never leaves an earlier build's files behind
    try:
        plan = family.plan(ctx)
        if isinstance(plan, str):
            return ExtendTask(**base, status="skipped", reason=plan)
        gt = {
            **plan.ground_truth,
            "family": family.name,
            "instance_id": ctx.instance_id,
            "seed": ctx.seed,
            "family_config": getattr(ctx.config, family.name).model_dump(),
            "baseline_passed": ctx.baseline_passed if plan.needs_tests else [],
        }
        test_cmd = ctx.test_cmd
    except ExtendError as exc:
        return ExtendTask(**base, status="skipped", reason=f"cannot build: {exc}")
    copy_tree(ctx.source, repo)  # not the private copy: the baseline tests and probes ran in that one
    apply_edit(repo, {"files": plan.erase})
    commit = init_single_commit(repo, expect=source_files(ctx.source))  # erasing rewrites, never removes
    carry_version_tag(ctx.source, repo)
    write_json(truth, gt)
    config = ctx.config
    spec = ValidatorSpec(
        family=family.name,
        python=config.python,
        test_cmd=test_cmd,
        test_log_parser=config.test_log_parser,
        test_env=config.test_env,
        pre_setup_cmd=config.pre_setup_cmd,
        setup_cmd=config.setup_cmd,
        setup_lock=config.setup_lock,
        image=config.image,
        test_timeout_s=config.test_timeout_s,
        probe_timeout_s=config.probe_timeout_s,
        scope_ignore=config.scope_ignore,
    )
    task = ExtendTask(
        **base,
        status="ok",
        prompt=plan.prompt,
        repo=str(repo),
        base_commit=commit,
        allowed_files=plan.allowed_files,
        ground_truth=str(truth),
        validator=spec,
    )
    if not config.self_check:
        return task.model_copy(update={"self_check": SelfCheck(status="skipped", reason="self_check disabled")})
    return task


def _remove(repo: Path, truth: Path) -> None:
    shutil.rmtree(repo, ignore_errors=True)
    truth.unlink(missing_ok=True)


def validate_extend(task: ExtendTask, worktree: Path, *, grader: Grader | None = None) -> ValidationResult:
    """Check an answer in `worktree` (a checkout of the task's repository, possibly run in)."""
    if task.status != "ok" or task.validator is None or task.ground_truth is None or task.base_commit is None:
        return ValidationResult(passed=False, reasons=[f"task {task.task_id} is {task.status}: {task.reason}"])
    spec, gt, checks = task.validator, read_json(Path(task.ground_truth)), {}
    worktree = Path(worktree)

    def failed(stage: str, reasons: list[str]) -> ValidationResult:
        shown = reasons[:MAX_REASONS] + (
            [f"... and {len(reasons) - MAX_REASONS} more"] if len(reasons) > MAX_REASONS else []
        )
        return ValidationResult(passed=False, reasons=shown, failed_stage=stage, checks={**checks, stage: False})

    changed = changed_paths(worktree, task.base_commit, spec.scope_ignore)
    outside = scope_violations(changed, task.allowed_files, gt.get("test_files", []))
    if outside:
        allowed = "non-test files" if task.allowed_files is None else ", ".join(task.allowed_files)
        return failed("scope", [f"scope: changed {', '.join(outside)}; only {allowed} may change"])
    checks["scope"] = True
    if task.family == "multi_file":
        if grader is None:
            return failed("grader", ["grader: no grader was given for this multi_file task"])
        graded = grader(task, worktree, gt)
        if not graded.passed:
            return failed("grader", graded.reasons or ["grader: not resolved"])
        return ValidationResult(passed=True, checks={**checks, "grader": True})
    try:
        reasons = FAMILY_IMPL[task.family].check(worktree, gt, spec)
    except ExtendError as exc:
        reasons = [f"dynamic check could not run: {exc}"]
    if reasons:
        return failed("dynamic", reasons)
    checks["dynamic"] = True
    try:
        reasons = tests_reasons(run_project_tests(worktree, spec.test_cmd, spec), gt["baseline_passed"])
    except ExtendError as exc:
        reasons = [str(exc)]
    if reasons:
        return failed("tests", reasons)
    return ValidationResult(passed=True, checks={**checks, "tests": True})


def self_check(task: ExtendTask, *, grader: Grader | None = None) -> SelfCheck:
    """Validate the ground truth and three wrong answers in disposable clones of the task's repo."""
    gt = read_json(Path(task.ground_truth))
    family = FAMILY_IMPL[task.family]
    if task.family == "multi_file" and (grader is None or not gt.get("solution")):
        missing = "a grader" if grader is None else "a gold patch remapped onto the variant"
        return SelfCheck(status="deferred", reason=f"multi_file needs {missing} to be self-checked")
    semantic = "grader" if task.family == "multi_file" else "dynamic"
    solution = gt["solution"]
    cases = {
        "ground_truth": (solution, None),
        "no_change": ({}, {semantic}),
        "decoy": (family.decoy(gt), {semantic}),
        "out_of_scope": (None, {"scope"}),
    }
    results = {}
    for name, (edit, rejected_by) in cases.items():
        with tempfile.TemporaryDirectory(prefix="repoanchor-selfcheck-") as tmp:
            worktree = Path(tmp) / "repo"
            clone(Path(task.repo), worktree)
            try:
                apply_edit(worktree, edit if edit is not None else _out_of_scope(task, gt, worktree))
                result = validate_extend(task, worktree, grader=grader)
            except (ExtendError, ScopeError) as exc:
                result = ValidationResult(passed=False, reasons=[f"case could not be run: {exc}"])
        expected = result.passed if rejected_by is None else (not result.passed and result.failed_stage in rejected_by)
        results[name] = CaseResult(passed=expected, failed_stage=result.failed_stage, reasons=result.reasons)
    bad = [n for n, r in results.items() if not r.passed]
    if not bad:
        return SelfCheck(status="passed", cases=results)
    detail = "; ".join(f"{n}: {_why(results[n], cases[n][1])}" for n in bad)
    return SelfCheck(status="failed", reason=f"self-check failed: {detail}", cases=results)


def _why(result: CaseResult, rejected_by: set[str] | None) -> str:
    if rejected_by is None:
        return f"rejected by {result.failed_stage}: {' | '.join(result.reasons[:3])}"
    if result.failed_stage is None:
        return "accepted (the validator cannot tell it from the answer)"
    return (
        f"rejected by {result.failed_stage}, expected {'/'.join(sorted(rejected_by))}: {' | '.join(result.reasons[:2])}"
    )


def _out_of_scope(task: ExtendTask, gt: dict, worktree: Path) -> dict:
    """The ground truth plus a harmless edit to one file the agent may not change."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=worktree, capture_output=True, text=True).stdout.split("\0")
    if task.allowed_files is None:
        pool = [p for p in tracked if p in set(gt.get("test_files", [])) or is_test_file(p)]
    else:
        pool = [p for p in tracked if p and p not in set(task.allowed_files)]
    pool = sorted(p for p in pool if p.endswith(".py")) or sorted(p for p in pool if p)
    if not pool:
        raise ExtendError("no file outside the allowed set to edit")
    target = pool[0]
    files = dict(gt["solution"].get("files", {}))
    files[target] = files.get(target, (worktree / target).read_text("utf-8")) + OUT_OF_SCOPE_NOTE
    return {**gt["solution"], "files": files}
