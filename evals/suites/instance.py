"""One dataset instance's tasks: its variants built, the gold patch remapped, each task validated.

Runs in a worker process with its own work folder. Every task is staged under `work/export` and
only moved into the suite by the caller once the instance is finished, so a killed build never
leaves a half-made repository that passes for a task. A variant that fails to build, remap or
validate becomes a rejection with its reason; the instance's other variants go on.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from repoanchor.evals.harness import instance_env
from repoanchor.evals.harness.datasets import safe_name
from repoanchor.evals.harness.dependencies.release_date import ROW_FIELD
from repoanchor.evals.harness.failpoints import failpoint
from repoanchor.evals.harness.grading import patched_files
from repoanchor.evals.harness.instance_env import EnvSpec
from repoanchor.evals.harness.venv_build import interpreter_version
from repoanchor.evals.suites.checks.level1 import module_names
from repoanchor.evals.suites.checks.original_blame import explain, failing_in_original
from repoanchor.evals.suites.checks.validate import clone, validate_bare, validate_patched
from repoanchor.evals.suites.export import TRUTH_FORMAT, dumps, grading_row, rejection, scrub, task_row
from repoanchor.evals.suites.pair import GoldPerturbation, perturb_variant, yielding_to
from repoanchor.evals.suites.remap import Rejected, decoys, gold_tree, remap_patch, remap_record
from repoanchor.evals.suites.stage_clock import StageClock
from repoanchor.perturb.atomic import write_atomic
from repoanchor.perturb.metadata import variant_metadata
from repoanchor.perturb.source.files import source_files
from repoanchor.perturb.tree import ApplyConfig, TreeReport
from repoanchor.perturb.validation.validate import changed_files
from repoanchor.perturb.variant_git import IntegrityError, carry_version_tag, init_single_commit


def instance_seed(seed: int, label: str, instance_id: str) -> int:
    """A 63-bit seed per (suite seed, kind, instance): independent of dataset order and of other rows."""
    digest = hashlib.sha256(f"repoanchor.suite/1|{seed}|{label}|{instance_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass
class Work:
    """One instance's inputs and scratch space, prepared once and shared by its variants."""

    row: dict
    suite: str
    root: Path
    suite_dir: Path
    timeout: float
    env: EnvSpec | None = None
    original: Path | None = None
    with_gold: Path | None = None
    original_verdict: str | None = None
    """Why the original instance fails its level-3 checks here ("" where it passes); None until asked."""
    keep: bool = False
    """Keep scratch trees for debugging."""
    pair_processes: int = 1
    """2: a variant's V' is perturbed in a process of its own, beside V's first checks (see pair.py)."""
    python_version: str | None = None
    """"X.Y" of the instance's interpreter (set by `prepare`)."""
    imports_ok: dict[str, bool] = field(default_factory=dict)
    """Module -> whether it imports in the installed original (computed once per instance)."""
    tasks: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    summary: dict | None = None
    """Extend: the instance's family-assignment summary (perturbation counts), kept in its result file."""
    clock: StageClock = field(default_factory=StageClock)
    """Seconds per build stage (environment, perturbation, imports, tests), kept in its result file."""

    @property
    def export(self) -> Path:
        return self.root / "export"

    def scrub(self, value: Any) -> Any:
        """No work-folder or suite path in anything written: builds elsewhere must compare equal."""
        return scrub(value, {str(self.root): "<work>", str(self.suite_dir): "<suite>"})

    def gold_files(self) -> list[str]:
        return [f for f in patched_files(self.row["patch"]) if f.endswith(".py")]


def prepare(work: Work, provider: str, repo_cache: Path | None, cache_dir: Path | None) -> None:
    """Clone the original at base_commit (with its test environment) and a second copy with the gold patch."""
    work.root.mkdir(parents=True)
    checkout = work.root / "checkout"
    with work.clock.stage("environment"):
        work.env = instance_env.prepare(
            work.row, provider, checkout, repo_cache=repo_cache, cache_dir=cache_dir, own_trees=True
        )
    work.python_version = work.env.python_version or interpreter_version(work.env.python or sys.executable)
    if work.env.route == "spec":  # the tasks' commits are dated anew: their grades need the venv's date recorded
        work.row = {**work.row, ROW_FIELD: work.env.dependencies_as_of or "none"}
    # Building the venv may run an install in `checkout`, leaving ignored files (egg-info, a generated _version.py)
    # that apply_tree would copy: perturb clones of tracked files only, made at once (mostly file creation).
    with ThreadPoolExecutor(max_workers=2) as pool:
        original = pool.submit(instance_env.checkout, checkout, work.row["base_commit"], work.root / "original")
        with_gold = pool.submit(gold_tree, checkout, work.row, work.root / "with-gold")
        work.original, work.with_gold = original.result(), with_gold.result()


def build_task(work: Work, task_id: str, config: ApplyConfig, truth_extra: dict, **fields: Any) -> None:
    """Build, remap and validate one variant; on success it is staged, else recorded as rejected.

    `truth_extra` (seeds, the sampler's plan) goes to the ground truth; `fields` to the task row."""
    name = safe_name(task_id)
    repo = work.export / "repos" / name
    try:
        truth = {**_task(work, task_id, config, repo), **truth_extra}
    except Rejected as exc:
        shutil.rmtree(repo, ignore_errors=True)
        reason = explain(work, exc)
        work.rejected.append(rejection(work.row, work.suite, exc.stage, reason, task_id, **work.scrub(exc.detail)))
        return
    except Exception as exc:  # a tool failure in this variant: recorded, and the instance's other variants go on
        shutil.rmtree(repo, ignore_errors=True)
        detail = {"traceback": work.scrub("".join(traceback.format_exception(exc)))}
        work.rejected.append(
            rejection(work.row, work.suite, "error", f"{type(exc).__name__}: {exc}", task_id, **detail)
        )
        return
    finally:
        if not work.keep:  # a variant's scratch trees (V', clones) add up over N variants of a big repository
            for scratch in (f"variant-gold-{name}", f"remap-{name}", f"check-{name}"):
                shutil.rmtree(work.root / scratch, ignore_errors=True)
    write_atomic(work.export / "ground_truth" / f"{name}.json", dumps(work.scrub(truth)))
    commit = truth["row"]["base_commit"]
    work.tasks.append(task_row(work.row, task_id, work.suite, commit, **fields))
    failpoint("suite.variant-staged", safe_name(work.row["instance_id"]))


def _task(work: Work, task_id: str, config: ApplyConfig, repo: Path) -> dict:
    """The variant V, committed and run before the patch while V' is made (beside it, with a core to spare: see
    pair.py), then the remapped gold patch and the run after it: the task's ground truth, or Rejected."""
    name = safe_name(task_id)
    with work.clock.stage("perturbation"):
        variant_gold, background = work.root / f"variant-gold-{name}", work.pair_processes >= 2
        report, gold = perturb_variant(work.original, work.with_gold, config, repo, variant_gold, background)
    # The remap (git, once V' is made) runs on a thread beside the run before the patch (the remap comes first).
    beside = ThreadPoolExecutor(max_workers=1)
    try:
        with work.clock.stage("perturbation"), yielding_to(gold.report):
            commit, checks, tag = _commit(work, repo)
            source = f"{work.row['repo']}@{work.row['base_commit']}"
            metadata = {**variant_metadata(work.original, config, report), "source": source}
        remap = partial(_remapped, work, name, variant_gold, report, gold)
        with yielding_to(gold.report, remap):
            check = clone(repo, work.root / f"check-{name}")
        gold.start()
        remapped = beside.submit(remap)
        with yielding_to(gold.report, remapped.result):
            bare_row = grading_row(work.row, task_id, commit, "")  # the run before the patch needs none
            excuse = partial(failing_in_original, work)
            before = validate_bare(check, bare_row, checks, work.env, work.timeout, work.clock, excuse, work.original)
        with work.clock.stage("perturbation"):
            patch, dropped = remapped.result()
    finally:  # V' first: after an interrupt, the remap thread may still wait for it
        gold.close()
        beside.shutdown()
    row = grading_row(work.row, task_id, commit, patch)
    checks["patch_files"] = [f for f in patched_files(patch) if f.endswith(".py")]
    truth = {
        "format": TRUTH_FORMAT,
        "task_id": task_id,
        "suite": work.suite,
        "source_instance": work.row["instance_id"],
        "row": row,
        "gold_patch": work.row["patch"],
        "apply_config": {k: v for k, v in asdict(config).items() if k != "workers"},
        "remap": remap_record(work.row, patch, work.original, dropped),
        "level1": checks,
        "metadata": metadata,
        "version_tag": tag,
    }
    with ThreadPoolExecutor(max_workers=1) as beside:  # V' and the remap clone are done with: gone meanwhile
        done_with = [] if work.keep else [variant_gold, work.root / f"remap-{name}"]
        beside.map(partial(shutil.rmtree, ignore_errors=True), done_with)
        after = validate_patched(check, row, checks, work.env, work.timeout, work.clock, excuse)
    return truth | {"validation": {"level1": "ok", "before": before, "after": after}}


def _commit(work: Work, repo: Path) -> tuple[str, dict, str | None]:
    """V's one commit (every file of the original still there), its version tag, and its level-1 checks."""
    with ThreadPoolExecutor(max_workers=1) as beside:  # the trees compared (reads, .git left out) while git hashes
        compared = beside.submit(changed_files, work.original, repo)
        try:  # the perturbation adds and rewrites files, never removes one: all of the original's must be there
            commit = init_single_commit(repo, expect=source_files(work.original))
        except IntegrityError as exc:
            raise Rejected("integrity", str(exc).replace(str(work.root), "<work>")) from None
        tag = carry_version_tag(work.original, repo)
    changed = [f for f in compared.result() if f.endswith(".py")]
    return commit, {"files": changed, "modules": _candidate_modules(work, changed)}, tag


def _remapped(work: Work, name: str, variant_gold: Path, report: TreeReport, gold: GoldPerturbation):
    """The remapped gold patch (`git diff V V'`, decoys dropped) and the decoys dropped from it; V' waited for."""
    dropped = decoys(report, gold.report())
    patch = remap_patch(work.export / "repos" / name, variant_gold, work.root / f"remap-{name}", dropped)
    if not patch.strip():
        raise Rejected("remap", "the remapped gold patch is empty: perturbation erased the fix")
    return patch, dropped


def _candidate_modules(work: Work, changed: list[str]) -> dict[str, str]:
    """The changed modules of the original (new files have no original to compare with): the variant must
    import each of them, unless the original does not either (`failing_in_original`, asked only after
    the variant's import check failed)."""
    return module_names(work.original, [f for f in changed if (work.original / f).is_file()])
