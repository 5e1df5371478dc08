"""Build a task suite (Perturb, SPT or Extend) from a SWE-bench-format dataset, in parallel and resumably.

Each instance is built by one worker in its own work folder (`SUITE/.build/work/<id>`); its tasks
are staged there and moved into `repos/` and `ground_truth/` when it is finished, and the instance
counts as done once its result file `SUITE/.build/results/<id>.json` exists (written last,
atomically). A rerun skips finished instances and first removes whatever a killed run left of an
unfinished one. `tasks.jsonl`, `rejected.jsonl` and the manifest are always assembled from the
result files in dataset order, so a resumed build is byte-identical to an unbroken one. One
instance's failure, even its worker dying, is a rejection with its reason; the batch goes on.
`publish.py` holds one instance's steps; `build_ray.py` builds instances on Ray nodes and publishes them here.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from repoanchor.evals.harness.datasets import load_dataset, safe_name
from repoanchor.evals.suites.export import dumps, jsonl, manifest, rejection, remove_stale_temporaries
from repoanchor.evals.suites.kinds import Kind, SuiteConfig
from repoanchor.evals.suites.pool import run_parallel
from repoanchor.evals.suites.publish import InstanceJob, died, result_path, run_instance
from repoanchor.evals.suites.selection import Selection, select_load
from repoanchor.perturb.atomic import write_atomic

SEED_DERIVATION = (
    "instance: int(sha256('repoanchor.suite/1|<seed>|<kind>|<instance_id>')[:8]) >> 1; "
    "spt variant i: sampler.variant_seed(instance seed, i)"
)


@dataclass
class SuiteReport:
    out: Path
    kind: str
    instances: int
    tasks: int
    rejected: int
    skipped_done: int
    """Instances already finished by an earlier (interrupted) run."""
    seconds: float


def build_suite(
    dataset: str | Path,
    kind: Kind,
    out: Path,
    *,
    provider: str = "local",
    repo_cache: Path | None = None,
    seed: int = 0,
    n_variants: int = 2,
    other_file_rate: float = 0.3,
    workers: int = 1,
    extend_config: dict | None = None,
    cache_dir: Path | None = None,
    config: SuiteConfig | None = None,
    progress: bool = True,
    keep_work: bool = False,
    selection: Selection | None = None,
    preset: dict | None = None,
    executor: str = "local",
    address: str | None = None,
) -> SuiteReport:
    """Build (or finish building) the suite at `out`; `config` overrides the keyword settings. `selection`
    chooses the instances; `preset` (a named protocol's settings) is recorded in the manifest as given.
    `executor` ray: each instance built on a node of the Ray cluster at `address` (see build_ray.py); the result
    is the same as here, so a build begun with one executor may be finished with the other."""
    started = time.monotonic()
    if provider not in ("local", "image"):
        raise ValueError(f"unknown provider {provider!r}; expected 'local' or 'image'")
    _check_executor(executor, cache_dir, keep_work)
    config = config or SuiteConfig(
        kind=kind, seed=seed, n_variants=n_variants, other_file_rate=other_file_rate, extend=extend_config
    )
    full = load_dataset(dataset).require_rows()
    loaded, chosen = select_load(full, selection)
    out = Path(out).resolve()
    header = _header(dataset, full, config, provider)
    if chosen is not None:  # recorded only when asked, so builds without one keep their old header
        header["selection"] = chosen
    if preset is not None:
        header["preset"] = preset
    _check_resume(out, header)
    cache = Path(repo_cache).resolve() if repo_cache else None
    template = InstanceJob({}, out, config, provider, cache, cache_dir, keep_work)
    with _build_lock(out):
        done = _build_missing(loaded.rows, template, workers, progress, executor, address)
        tasks, rejected, timing, environments = _collect(out, loaded, config.kind, (config.extend or {}).get("assign"))
        timing["build_seconds"] = round(time.monotonic() - started, 3)
        manifest(out, header, tasks, rejected, timing, environments)
    seconds = time.monotonic() - started
    return SuiteReport(out, config.kind, len(loaded.rows), len(tasks), len(rejected), len(done), seconds)


def _check_executor(executor: str, cache_dir: Path | None, keep_work: bool) -> None:
    if executor not in ("local", "ray"):
        raise ValueError(f"unknown executor {executor!r}; expected 'local' or 'ray'")
    if executor == "ray" and cache_dir:  # a folder here; a node has its own
        raise ValueError("--venv-cache is a folder on this machine: Ray nodes use their own venv caches")
    if executor == "ray" and keep_work:
        raise ValueError("keep_work keeps work folders here; on Ray an instance's scratch trees are its node's")


@contextmanager
def _build_lock(out: Path) -> Iterator[None]:
    """One build per suite folder at a time: two would publish the same instances twice."""
    with (out / ".build" / "lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"{out} is being built by another process") from None
        yield


def _build_missing(
    rows: list[dict], template: InstanceJob, workers: int, progress: bool, executor: str, address: str | None
) -> set[str]:
    """Build every instance without a result file, here or on Ray; the ids that already had one."""
    done = {row["instance_id"] for row in rows if result_path(template.out, row["instance_id"]).is_file()}
    _remove_leftovers(template.out, done, template.keep_work)
    jobs = [replace(template, row=row) for row in rows if row["instance_id"] not in done]
    if executor == "local" and (workers <= 1 or len(jobs) == 1):  # one instance at a time: its V and V' at once
        jobs = [replace(job, pair_processes=2) for job in jobs]
    if executor == "ray":
        from repoanchor.evals.suites.build_ray import build_on_ray  # ray is imported only when asked for

        build_on_ray(jobs, address)
    else:
        run_parallel(run_instance, jobs, workers, died, label=f"{template.config.kind} suite", show=progress)
    return done


def _remove_leftovers(out: Path, done: set[str], keep_work: bool) -> None:
    """What a killed run left of the instances it had finished, and its half-written files.

    The caller holds the build lock, so nothing else is writing here. A done instance was killed at
    the latest between its result file and the removal of its moving note and work folder: its move
    had finished, so the note is stale and the work folder is scratch (kept only with `keep_work`).
    Unfinished instances are cleaned when they are rebuilt (`_discard_partial`)."""
    build = out / ".build"
    for instance_id in done:
        name = safe_name(instance_id)
        (build / "moving" / f"{name}.json").unlink(missing_ok=True)
        if not keep_work:
            shutil.rmtree(build / "work" / name, ignore_errors=True)
    for folder in (out, build, build / "results", build / "moving", out / "ground_truth"):
        remove_stale_temporaries(folder)


def _header(dataset: str | Path, loaded, config: SuiteConfig, provider: str) -> dict:
    rows = jsonl(loaded.rows)
    return {
        "suite": config.kind,
        "dataset": {
            "name": Path(str(dataset)).name,
            "sha256": hashlib.sha256(rows.encode()).hexdigest(),
            "rows": len(loaded.rows),
            "row_errors": len(loaded.errors),
        },
        "seed": config.seed,
        "seed_derivation": SEED_DERIVATION,
        "config": config.model_dump(mode="json"),
        "provider": provider,
    }


def _check_resume(out: Path, header: dict) -> None:
    """A rerun must continue the same build: same dataset rows, kind, seed and config."""
    path = out / ".build" / "header.json"
    if path.is_file():
        before = json.loads(path.read_text())
        if before != json.loads(dumps(header)):
            raise ValueError(f"{out} holds a build of another dataset or config; use a new --out or remove it")
    else:
        if out.exists() and any(p.name != ".build" for p in out.iterdir()):
            raise ValueError(f"{out} exists and is not a suite build folder; refusing to write into it")
        write_atomic(path, dumps(header))


def rejection_summary(out: Path, shown: int = 3) -> dict:
    """Rejections of a built suite by stage, and the first few with their reasons (shortened)."""
    path = out / "rejected.jsonl"
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
    by_stage: dict[str, int] = {}
    for item in items:
        by_stage[item["stage"]] = by_stage.get(item["stage"], 0) + 1
    first = [
        {key: item.get(key) for key in ("instance_id", "task_id", "stage")} | {"reason": item["reason"][:400]}
        for item in items[:shown]
    ]
    return {"count": len(items), "by_stage": by_stage, "first": first}


def _collect(out: Path, loaded, kind: str, assign: dict | None = None) -> tuple[list[dict], list[dict], dict, dict]:
    """Tasks and rejections of every instance in dataset order, then the dataset's malformed rows, timings and
    each instance's environment; with `assign` (Extend), only each instance's assigned family is kept and the
    other tasks are removed."""
    tasks, rejected, seconds, stages, summaries, environments = [], [], {}, {}, [], {}
    for row in loaded.rows:
        result = json.loads(result_path(out, row["instance_id"]).read_text())
        tasks += result["tasks"]
        rejected += result["rejected"]
        seconds[row["instance_id"]] = round(result["seconds"], 3)
        if result.get("stages"):  # a result written by an older build has none
            stages[row["instance_id"]] = result["stages"]
        if result.get("environment"):
            environments[row["instance_id"]] = result["environment"]
        summaries += [result["summary"]] if result.get("summary") else []
    if kind == "extend" and assign is not None:
        from repoanchor.evals.suites.extend.suite import assign_one_family

        tasks, dropped = assign_one_family(tasks, summaries, assign)
        rejected += dropped
        for item in dropped:  # assembled again on every resume: removing twice is a no-op
            shutil.rmtree(out / "repos" / safe_name(item["task_id"]), ignore_errors=True)
            (out / "ground_truth" / f"{safe_name(item['task_id'])}.json").unlink(missing_ok=True)
    for error in loaded.errors:
        where = {"line": error.line} if error.line else {"row": error.row}
        rejected.append(rejection({"instance_id": error.instance_id}, kind, "dataset", error.message, **where))
    return tasks, rejected, {"instance_seconds": seconds, "instance_stages": stages}, environments
