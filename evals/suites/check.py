"""`repoanchor suite validate`: re-check every task of a suite folder from the folder alone.

For each task: the repository's tree and the ground-truth file must still hash to what the
manifest recorded, and the task must validate again: levels 1 and 3 (Perturb, SPT) or the
family's validator on the ground-truth solution (Extend). Each task is checked in a throwaway
clone of its repository, so validating changes nothing in the suite.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from repoanchor.evals.harness.container_run import choose_provider
from repoanchor.evals.harness.datasets import safe_name
from repoanchor.evals.harness.suite_format import GROUND_TRUTH_DIR, MANIFEST_FILE, read_suite_tasks
from repoanchor.evals.harness.tasks import TaskError
from repoanchor.evals.suites.checks.validate import clone, suite_env, validate_task
from repoanchor.evals.suites.export import sha256_file, tree_id
from repoanchor.evals.suites.pool import run_parallel
from repoanchor.evals.suites.pool_ray import RayJobs
from repoanchor.evals.suites.remap import Rejected
from repoanchor.scaffolds.environments.bundle import bundle_repository, unpack_bundle
from repoanchor.scaffolds.records import InfraError


@dataclass(frozen=True)
class CheckJob:
    suite: Path
    task_id: str
    repo: str
    cache_dir: Path | None
    hashes: dict
    timeout: float
    provider: str = "local"


def validate_suite(
    suite: Path, *, workers: int = 1, cache_dir: Path | None = None, progress: bool = False, provider: str = "local",
    executor: str = "local", address: str | None = None,
) -> dict:  # fmt: skip
    """A JSON-ready summary; `ok` is False when any task fails. `provider`: where tests run (see suite_env).
    `executor` ray: each task checked on a Ray node (`address`) from what it is sent (see `validate_on_ray`)."""
    suite = Path(suite).resolve()
    if not (suite / MANIFEST_FILE).is_file():
        raise TaskError(
            f"{suite}: not a built suite folder (no {MANIFEST_FILE}); build one with `repoanchor suite build`"
        )
    try:
        manifest = json.loads((suite / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TaskError(f"{suite / MANIFEST_FILE}: not JSON: {exc}") from None
    hashes, timeout = manifest.get("hashes", {}), manifest.get("config", {}).get("timeout", 1800.0)
    jobs = [
        CheckJob(suite, row.instance_id, row.repoanchor_repo, cache_dir, hashes, timeout, provider)
        for row in read_suite_tasks(suite)
    ]
    if executor == "ray":
        results = validate_on_ray(jobs, address)
    else:
        results = run_parallel(check_task, jobs, workers, _died, label="validate", show=progress)
    failed = [r for r in results if not r["ok"]]
    return {
        "suite": str(suite),
        "kind": manifest.get("suite"),
        "provider": provider,
        "routes": dict(Counter(str(r.get("route")) for r in results)),
        "tasks": len(results),
        "passed": len(results) - len(failed),
        "failed": failed,
        "ok": bool(results) and not failed,  # a suite of no task proves nothing
    }


def check_task(job: CheckJob) -> dict:
    name = safe_name(job.task_id)
    return _checked(job, _hash_reasons(job, name), job.suite / GROUND_TRUTH_DIR / f"{name}.json")


def _checked(job: CheckJob, reasons: list[str], truth_path: Path) -> dict:
    """`job`'s record: the hashes' `reasons` and the task's own, checked in a throwaway clone."""
    where: dict = {"route": None}
    scratch = Path(tempfile.mkdtemp(prefix="repoanchor-validate-"))
    try:
        truth = json.loads(truth_path.read_text())
        reasons = reasons + _task_reasons(job, truth, scratch / "check", where)
    except Exception as exc:  # an unreadable task fails; the others are still checked
        reasons = [*reasons, f"error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"task_id": job.task_id, "ok": not reasons, "reasons": reasons, **where}


def validate_on_ray(jobs: list[CheckJob], address: str | None) -> list[dict]:
    """Each task checked on a Ray node: the manifest's hashes here (they are about this folder), the rest there
    from what is sent (the ground truth's text, the repository's HEAD as a bundle); the node's own venv cache."""
    with RayJobs(address) as cluster:
        sent = [_parcel(cluster, job) for job in jobs]
        return cluster.run(check_shipped, sent, lambda parcel, exc: _died(parcel[0], exc))


def _parcel(cluster: RayJobs, job: CheckJob) -> tuple:
    name = safe_name(job.task_id)
    reasons = _hash_reasons(job, name)
    truth = job.suite / GROUND_TRUTH_DIR / f"{name}.json"
    truth_text = truth.read_text() if truth.is_file() else None
    travelling = replace(job, suite=Path("suite-stays-on-the-driver"), cache_dir=None)
    try:
        bundle, commit = bundle_repository(job.suite / job.repo, "HEAD")  # what `clone` checks out
    except InfraError as exc:  # no repository to send: the task fails with the reason, as a failed clone would
        return travelling, [*reasons, f"error: {exc.message}"], truth_text, None, ""
    return travelling, reasons, truth_text, cluster.put(bundle), commit


def check_shipped(job: CheckJob, reasons: list[str], truth_text: str | None, bundle: bytes | None, commit: str) -> dict:
    """A Ray task: `job` checked in a temporary folder of this node, its repository unpacked from `bundle`."""
    if bundle is None:
        return {"task_id": job.task_id, "ok": False, "reasons": reasons, "route": None}
    with tempfile.TemporaryDirectory(prefix="repoanchor-validate-") as scratch:
        root = Path(scratch)
        unpack_bundle(bundle, commit, root, working_tree=True)
        truth = root / "ground_truth.json"
        if truth_text is not None:  # else reading it fails as it does locally: the task's error
            truth.write_text(truth_text)
        return _checked(replace(job, suite=root, repo="repo"), reasons, truth)


def _hash_reasons(job: CheckJob, name: str) -> list[str]:
    reasons = []
    expected_tree = job.hashes.get("repos", {}).get(name)
    if expected_tree and tree_id(job.suite / job.repo) != expected_tree:
        reasons.append("repository tree differs from the manifest's hash")
    expected_truth = job.hashes.get("ground_truth", {}).get(name)
    path = job.suite / GROUND_TRUTH_DIR / f"{name}.json"
    if expected_truth and path.is_file() and sha256_file(path) != expected_truth:
        reasons.append("ground-truth file differs from the manifest's hash")
    return reasons


def _task_reasons(job: CheckJob, truth: dict, check: Path, where: dict) -> list[str]:
    """Why the task fails (none: it passes); `where` gets the route its tests ran by."""
    repo = job.suite / job.repo
    if truth.get("extend"):
        from repoanchor.evals.suites.extend.suite import check_extend_task

        chosen = choose_provider(truth["row"], job.provider)[0]
        where["route"] = "env-image" if chosen == "image" else "host"  # where the family validators run
        return check_extend_task(repo, truth, check, job.cache_dir, chosen)
    clone(repo, check)
    env = suite_env(truth, check, job.cache_dir, job.provider)
    where["route"] = env.route
    try:
        validate_task(check, truth, env, job.timeout)
    except Rejected as exc:
        return [f"{exc.stage}: {exc.reason}"]
    return []


def _died(job: CheckJob, exc: BaseException) -> dict:
    return {"task_id": job.task_id, "ok": False, "reasons": [f"validator process died: {exc}"]}
