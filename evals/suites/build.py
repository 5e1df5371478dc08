"""Build a task suite (Perturb, SPT or Extend) from a SWE-bench-format dataset, in parallel and resumably.

Each instance is built by one worker in its own work folder (`SUITE/.build/work/<id>`); its tasks
are staged there and moved into `repos/` and `ground_truth/` when it is finished, and the instance
counts as done once its result file `SUITE/.build/results/<id>.json` exists (written last,
atomically). A rerun skips finished instances and first removes whatever a killed run left of an
unfinished one. `tasks.jsonl`, `rejected.jsonl` and the manifest are always assembled from the
result files in dataset order, so a resumed build is byte-identical to an unbroken one. One
instance's failure, even its worker dying, is a rejection with its reason; the batch goes on.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.harness.failpoints import failpoint
from repoanchor.evals.suites.export import dumps, jsonl, manifest, rejection, remove_stale_temporaries, safe_name
from repoanchor.evals.suites.instance import Work, prepare
from repoanchor.evals.suites.kinds import BUILDERS, Kind, SuiteConfig
from repoanchor.evals.suites.pool import run_parallel
from repoanchor.evals.suites.remap import Rejected
from repoanchor.evals.suites.selection import Selection, select_load
from repoanchor.perturb.atomic import write_atomic

ENVIRONMENT_FIELDS = {"provider", "route", "image", "python_version", "skipped"}
"""What a suite manifest records of each instance's environment (a venv path is this machine's alone)."""
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


@dataclass(frozen=True)
class InstanceJob:
    row: dict
    out: Path
    config: SuiteConfig
    provider: str
    repo_cache: Path | None
    cache_dir: Path | None
    keep_work: bool = False


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
) -> SuiteReport:
    """Build (or finish building) the suite at `out`; `config` overrides the keyword settings. `selection`
    chooses the instances; `preset` (a named protocol's settings) is recorded in the manifest as given."""
    started = time.monotonic()
    if provider not in ("local", "image"):
        raise ValueError(f"unknown provider {provider!r}; expected 'local' or 'image'")
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
        done = _build_missing(loaded.rows, template, workers, progress)
        tasks, rejected, timing, environments = _collect(out, loaded, config.kind, (config.extend or {}).get("assign"))
        timing["build_seconds"] = round(time.monotonic() - started, 3)
        manifest(out, header, tasks, rejected, timing, environments)
    seconds = time.monotonic() - started
    return SuiteReport(out, config.kind, len(loaded.rows), len(tasks), len(rejected), len(done), seconds)


@contextmanager
def _build_lock(out: Path) -> Iterator[None]:
    """One build per suite folder at a time: two would publish the same instances twice."""
    with (out / ".build" / "lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"{out} is being built by another process") from None
        yield


def _build_missing(rows: list[dict], template: InstanceJob, workers: int, progress: bool) -> set[str]:
    """Build every instance without a result file; the ids that already had one."""
    done = {row["instance_id"] for row in rows if _result_path(template.out, row["instance_id"]).is_file()}
    _remove_leftovers(template.out, done, template.keep_work)
    jobs = [replace(template, row=row) for row in rows if row["instance_id"] not in done]
    run_parallel(run_instance, jobs, workers, _died, label=f"{template.config.kind} suite", show=progress)
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


def _result_path(out: Path, instance_id: str) -> Path:
    return out / ".build" / "results" / f"{safe_name(instance_id)}.json"


def run_instance(job: InstanceJob) -> None:
    """Build one instance's tasks and publish them; never raises for a problem of the instance."""
    started = time.monotonic()
    name = safe_name(job.row["instance_id"])
    root = job.out / ".build" / "work" / name
    _discard_partial(job.out, name, root)
    work = Work(job.row, job.config.kind, root, job.out, job.config.timeout, keep=job.keep_work)
    try:
        prepare(work, job.provider, job.repo_cache, job.cache_dir)
        BUILDERS[job.config.kind](work, job.config)
    except Rejected as exc:
        work.rejected.append(rejection(job.row, work.suite, exc.stage, exc.reason, **work.scrub(exc.detail)))
    except Exception as exc:  # one instance's bug or broken input must not stop the batch
        detail = {"traceback": work.scrub("".join(traceback.format_exception(exc)))}
        work.rejected.append(rejection(job.row, work.suite, "error", f"{type(exc).__name__}: {exc}", **detail))
    failpoint("suite.built", name)
    _publish(job.out, name, work)
    record = {"instance_id": job.row["instance_id"], "tasks": work.tasks, "rejected": work.scrub(work.rejected)}
    if work.summary is not None:
        record["summary"] = work.summary
    if work.env is not None:  # where this instance's tasks were validated (an image may say which Python it had)
        environment = work.env.model_dump(include=ENVIRONMENT_FIELDS, exclude_none=True)
        record["environment"] = work.scrub({**environment, "python_version": work.python_version})
    seconds = time.monotonic() - started
    record |= {"seconds": seconds, "stages": work.clock.record(seconds)}
    write_atomic(_result_path(job.out, job.row["instance_id"]), dumps(record))
    failpoint("suite.result-written", name)
    (job.out / ".build" / "moving" / f"{name}.json").unlink(missing_ok=True)
    failpoint("suite.note-removed", name)
    if not job.keep_work:
        shutil.rmtree(root, ignore_errors=True)


def _publish(out: Path, name: str, work: Work) -> None:
    """Move the accepted tasks' repos and ground truth into the suite, recording first what is about to move.

    Only what a task row names moves: anything else staged (a crashed variant's tree) stays to be deleted."""
    names = [safe_name(task["instance_id"]) for task in work.tasks]
    staged = [rel for n in names for rel in (f"repos/{n}", f"ground_truth/{n}.json")]
    write_atomic(out / ".build" / "moving" / f"{name}.json", dumps(staged))
    for rel in staged:
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # Task names derive from this instance's id, so anything there is an earlier build of this very
        # instance (its result file removed to redo it): replaced, never merged with, never a crash.
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        (work.export / rel).rename(target)
        failpoint("suite.moved-one", name)


def _discard_partial(out: Path, name: str, root: Path) -> None:
    """What a killed run left of this instance: its work folder and anything it had begun to move."""
    moving = out / ".build" / "moving" / f"{name}.json"
    if moving.is_file():
        for rel in json.loads(moving.read_text()):
            target = out / rel
            shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
        moving.unlink()
    shutil.rmtree(root, ignore_errors=True)


def _died(job: InstanceJob, exc: BaseException) -> None:
    """The worker process itself died (memory, signal): the instance is recorded as rejected."""
    reason = f"worker process died: {type(exc).__name__}: {exc}"
    record = {"instance_id": job.row["instance_id"], "tasks": [], "seconds": 0.0}
    record["rejected"] = [rejection(job.row, job.config.kind, "error", reason)]
    name = safe_name(job.row["instance_id"])
    _discard_partial(job.out, name, job.out / ".build" / "work" / name)
    write_atomic(_result_path(job.out, job.row["instance_id"]), dumps(record))


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
        result = json.loads(_result_path(out, row["instance_id"]).read_text())
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
