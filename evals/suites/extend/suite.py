"""The Extend suite: the four `evals.suites.extend` families cut from an instance's validated Perturb variant.

The Perturb task is built and validated first (levels 1 and 3); its repository is the
`variant_tree` handed to `build_extend_tasks`, with the original row (so multi_file counts the
files of the *gold* patch) and the remapped gold patch as the multi_file solution. multi_file is
graded SWE-bench's way: the test patch on the agent's tree, FAIL_TO_PASS and PASS_TO_PASS must
pass (`grader`). Each built task was self-checked by the family code (ground truth accepted,
no change, a decoy and an out-of-scope edit rejected); skipped and rejected families are
recorded in rejected.jsonl with their reasons.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from pathlib import Path

from repoanchor.evals.harness.datasets import safe_name
from repoanchor.evals.harness.grading import grade, run_tests
from repoanchor.evals.harness.instance_env import EnvSpec
from repoanchor.evals.suites.checks.validate import clone, suite_env
from repoanchor.evals.suites.export import TRUTH_FORMAT, dumps, rejection
from repoanchor.evals.suites.extend.scope import worktree_diff
from repoanchor.evals.suites.instance import Work, instance_seed
from repoanchor.perturb.atomic import write_atomic
from repoanchor.scaffolds.environments.local import PATCH_EXCLUDE_PATHSPECS

# Litter of test runs, never part of an answer (as scaffolds.environment excludes it from patches).
EXCLUDES = list(PATCH_EXCLUDE_PATHSPECS)  # an answer's patch leaves out what an agent run's patch leaves out


def worktree_patch(worktree: Path, base: str) -> str:
    """The answer in `worktree` as a patch against `base`, untracked files included (private index)."""
    return worktree_diff(worktree, base, "--binary", pathspecs=EXCLUDES)


def grader(row: dict, env: EnvSpec, timeout: float):
    """multi_file's grader: SWE-bench's verdict on the answer, in a fresh clone of the task repo."""
    from repoanchor.evals.suites.extend import ValidationResult

    def grade_answer(task, worktree: Path, gt: dict) -> ValidationResult:
        task_row = {**row, "instance_id": task.task_id, "base_commit": task.base_commit}
        patch = worktree_patch(worktree, task.base_commit)
        with tempfile.TemporaryDirectory(prefix="repoanchor-grade-") as tmp:
            run = run_tests(clone(Path(task.repo), Path(tmp) / "repo"), task_row, patch, env, timeout)
        verdict = grade(task_row, run.outcomes, run.status)
        failing = verdict.f2p.failure + verdict.p2p.failure
        return ValidationResult(
            passed=verdict.resolved, reasons=[] if verdict.resolved else [f"{verdict.status}: {failing}"]
        )

    return grade_answer


ASSIGN_KEY = "assign"
"""In SuiteConfig.extend: {"proxy_k", "constant_k", "touched_files_min"} turns on the paper's assignment of
one family per instance (applied when the suite is assembled); without it every family is built."""


def build_extend_from_perturb(work: Work, config) -> None:
    """Turn the instance's accepted Perturb task into Extend tasks (the Perturb task itself is not kept)."""
    from repoanchor.evals.suites.extend import FamiliesConfig, build_extend_tasks, summarize_instance
    from repoanchor.evals.suites.extend.common import ExtendError
    from repoanchor.evals.suites.extend.project_tests import suite_test_settings

    if not work.tasks:
        return  # the Perturb variant was rejected; its reason is already recorded
    perturb_task = work.tasks.pop()
    name = safe_name(perturb_task["instance_id"])
    variant = work.root / "perturb-variant"
    (work.export / "repos" / name).rename(variant)
    truth = json.loads((work.export / "ground_truth" / f"{name}.json").read_text())
    (work.export / "ground_truth" / f"{name}.json").unlink()
    work.summary = summarize_instance(truth["metadata"], work.row).model_dump()
    options = {k: v for k, v in (config.extend or {}).items() if k != ASSIGN_KEY}
    try:
        tests = {} if "test_cmd" in options else suite_test_settings(work.row)
    except ExtendError as exc:
        task_id = f"{work.row['instance_id']}__extend"
        work.rejected.append(rejection(work.row, "extend", "extend-skipped", work.scrub(str(exc)), task_id))
        return
    families = FamiliesConfig(**{**extend_env(work.env), **tests, **options})
    seed = instance_seed(config.seed, "extend", work.row["instance_id"])
    tasks = build_extend_tasks(
        variant, truth["metadata"], work.row, work.root / "extend", families_config=families, seed=seed,
        gold_patch=truth["row"]["patch"], grader=grader(truth["row"], work.env, work.timeout), clock=work.clock,
    )  # fmt: skip
    for task in tasks:
        if task.status == "ok":
            _stage(work, task, truth, seed)
        else:
            reason = work.scrub(task.reason or task.status)
            if task.status == "skipped" and task.family in FAMILY_TRANSFORM:
                reason += f"; {gold_file_note(truth['metadata'], FAMILY_TRANSFORM[task.family], work.gold_files())}"
            work.rejected.append(
                rejection(work.row, "extend", f"extend-{task.status}", reason, task.task_id, family=task.family)
            )


FAMILY_TRANSFORM = {
    "proxy_chain": "proxy-imports",
    "runtime_target": "runtime-target-masking",
    "missing_constant": "constant-externalization",
}
"""The perturbation each erasing family is cut from."""


def gold_file_note(metadata: dict, transform: str, gold_files: list[str]) -> str:
    """What `transform` did to each gold file, from the variant's outcomes: why a family found no material
    where the paper puts it (e.g. "runtime-target-masking skipped src/x.py: doctest-collection: ...")."""
    outcomes = {o["file"]: o for o in metadata.get("outcomes", []) if o.get("transform") == transform}
    notes = []
    for path in gold_files:
        outcome = outcomes.get(path)
        if outcome is None:
            notes.append(f"{path}: not reached by {transform}")
        elif outcome["kind"] == "applied":
            notes.append(f"{path}: {transform} applied at {len(outcome.get('sites', []))} site(s)")
        else:
            # a Failed outcome carries a traceback: its last line says what went wrong
            why = (outcome.get("reason") or outcome.get("error") or "").strip().splitlines()[-1:]
            notes.append(f"{path}: {transform} {outcome['kind']}: {''.join(why)}")
    return "on the gold files: " + ("; ".join(notes) if notes else "the gold patch touches no Python file")


def _stage(work: Work, task, perturb_truth: dict, seed: int) -> None:
    name = safe_name(task.task_id)
    Path(task.repo).rename(work.export / "repos" / name)
    record = task.model_dump(mode="json", exclude={"repo", "ground_truth"})
    truth = {
        "format": TRUTH_FORMAT,
        "task_id": task.task_id,
        "suite": "extend",
        "source_instance": work.row["instance_id"],
        "family": task.family,
        "seeds": {**perturb_truth["seeds"], "extend_seed": seed},
        "row": {**perturb_truth["row"], "instance_id": task.task_id, "base_commit": task.base_commit},
        "gold_patch": perturb_truth["gold_patch"],
        "extend": {"task": record, "ground_truth": json.loads(Path(task.ground_truth).read_text())},
        "perturb": {"remap": perturb_truth["remap"], "metadata": perturb_truth["metadata"]},
    }
    write_atomic(work.export / "ground_truth" / f"{name}.json", dumps(work.scrub(truth)))
    # The family's prompt replaces the issue, and the hints are about another task.
    visible = {key: work.row[key] for key in ("repo", "version", "created_at") if key in work.row}
    work.tasks.append({**visible, **task.suite_row(f"repos/{name}")})


def extend_env(env) -> dict:
    """FamiliesConfig/ValidatorSpec fields for the instance's environment: its Python, its pre-install steps
    (once per tree) and its install step run in every checkout the families test or probe (under the venv's
    lock, as grading runs it)."""
    lock = None
    if env.venv:
        venv = Path(env.venv)
        lock = str(venv.parent / f"{venv.name}.lock")  # venv_build.locked's file: grading and Extend exclude each other
    image = env.image if env.route == "env-image" else None  # there, probes and tests run in its containers
    pre = "\n".join(env.pre_install)  # once per tree: they edit files (setup_steps)
    return {
        "python": env.python, "pre_setup_cmd": pre, "setup_cmd": env.install or "", "setup_lock": lock, "image": image,
    }  # fmt: skip


def extend_task_from_truth(
    repo: Path, truth: dict, scratch: Path, cache_dir: Path | None = None, provider: str = "local",
    private_venv: Path | None = None,
):  # fmt: skip
    """The suite's Extend task read back from its ground truth, and the grader its validator uses; `provider`
    and `private_venv` say where its checks run (`suite_env`), whatever the build used."""
    from repoanchor.evals.suites.extend import ExtendTask

    scratch.mkdir(parents=True, exist_ok=True)
    gt_path = scratch / "ground_truth.json"
    gt_path.write_text(json.dumps(truth["extend"]["ground_truth"]))
    task = ExtendTask(**truth["extend"]["task"], repo=str(repo), ground_truth=str(gt_path))
    env = suite_env(truth, clone(repo, scratch / "env"), cache_dir, provider, private_venv)
    if task.validator is not None:  # the environment as rebuilt here (its venv may live elsewhere than the build's)
        task = task.model_copy(update={"validator": rehomed(task.validator, extend_env(env))})
    return task, grader(truth["row"], env, task.validator.test_timeout_s if task.validator else 1800)


def rehomed(validator, fields: dict):
    """The validator with another environment's fields; its test command, which names the build's Python,
    names this one's."""
    command = validator.test_cmd.replace(shlex.quote(validator.python), shlex.quote(fields["python"]))
    return validator.model_copy(update={**fields, "test_cmd": command})


def check_extend_task(
    repo: Path, truth: dict, scratch: Path, cache_dir: Path | None = None, provider: str = "local"
) -> list[str]:
    """From the suite alone: the ground-truth solution passes the family validator; no change fails."""
    from repoanchor.evals.suites.extend import validate_extend
    from repoanchor.evals.suites.extend.base import apply_edit

    task, grade_answer = extend_task_from_truth(repo, truth, scratch, cache_dir, provider)
    reasons = []
    for case, edit in (("ground truth", truth["extend"]["ground_truth"].get("solution")), ("no change", {})):
        worktree = clone(repo, scratch / case.replace(" ", "-"))
        apply_edit(worktree, edit or {})
        result = validate_extend(task, worktree, grader=grade_answer)
        if result.passed != (case == "ground truth"):
            reasons.append(f"{case}: {'accepted' if result.passed else 'rejected: ' + ' | '.join(result.reasons[:3])}")
        shutil.rmtree(worktree, ignore_errors=True)
    return reasons


def assign_one_family(tasks: list[dict], summaries: list[dict], options: dict) -> tuple[list[dict], list[dict]]:
    """Keep, per instance, only the task of the family the paper's rules assign it (RepoMirage §4.2, K from
    `options`); returns (kept tasks, rejections for the others). Pure: the same inputs give the same split."""
    from repoanchor.evals.suites.extend import InstanceSummary, assign_families

    assignment = assign_families([InstanceSummary(**summary) for summary in summaries], **options)
    kept, dropped = [], []
    for task in tasks:
        family = assignment.per_instance.get(task["repoanchor_source_instance"], {}).get("family")
        if task.get("repoanchor_family") == family:
            kept.append(task)
        else:
            reason = f"the family assignment (K={options}) gave this instance {family}, not {task['repoanchor_family']}"
            row = {"instance_id": task["repoanchor_source_instance"]}
            dropped.append(rejection(row, "extend", "extend-unassigned", reason, task["instance_id"]))
    return kept, dropped
