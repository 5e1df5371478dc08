"""One instance of a suite build, from its build to its result file: the resumable unit of `build.py`.

An instance is built in its work folder (`SUITE/.build/work/<id>`), where its tasks are staged, then published:
a moving note lists what is about to move into `repos/` and `ground_truth/`, the files move, the result file
`SUITE/.build/results/<id>.json` is written last and atomically, then the note and the work folder go. A rerun
removes what a killed run left of an unfinished instance first (`discard_partial`). An instance built elsewhere
(a Ray node, `build_ray.py`) comes back as its staged tasks and its record; the driver unpacks the tasks into the
work folder and publishes them with these same steps, so a build resumes alike whichever executor ran it.
"""

from __future__ import annotations

import json
import shutil
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from repoanchor.evals.harness.datasets import safe_name
from repoanchor.evals.harness.failpoints import failpoint
from repoanchor.evals.suites.export import dumps, rejection
from repoanchor.evals.suites.instance import Work, prepare
from repoanchor.evals.suites.kinds import BUILDERS, SuiteConfig
from repoanchor.evals.suites.remap import Rejected
from repoanchor.perturb.atomic import write_atomic

ENVIRONMENT_FIELDS = {"provider", "route", "image", "python_version", "skipped"}
"""What a suite manifest records of each instance's environment (a venv path is this machine's alone)."""


@dataclass(frozen=True)
class InstanceJob:
    row: dict
    out: Path
    config: SuiteConfig
    provider: str
    repo_cache: Path | None
    cache_dir: Path | None
    keep_work: bool = False
    pair_processes: int = 1
    """Processes perturbing a variant's V and V' at once: 2 where instances are built one at a time here."""


def result_path(out: Path, instance_id: str) -> Path:
    return out / ".build" / "results" / f"{safe_name(instance_id)}.json"


def work_folder(job: InstanceJob) -> Path:
    return job.out / ".build" / "work" / safe_name(job.row["instance_id"])


def run_instance(job: InstanceJob) -> None:
    """Build one instance's tasks and publish them; never raises for a problem of the instance."""
    started = time.monotonic()
    name, root = safe_name(job.row["instance_id"]), work_folder(job)
    discard_partial(job.out, name, root)
    work = build_instance(job, root)
    failpoint("suite.built", name)
    publish(job.out, name, work.export, work.tasks)
    finish(job, instance_record(job, work, started))


def build_instance(job: InstanceJob, root: Path) -> Work:
    """The instance's tasks staged under `root`/export, its rejections recorded in the returned Work."""
    work = Work(job.row, job.config.kind, root, job.out, job.config.timeout, keep=job.keep_work)
    work.pair_processes = job.pair_processes
    try:
        prepare(work, job.provider, job.repo_cache, job.cache_dir)
        BUILDERS[job.config.kind](work, job.config)
    except Rejected as exc:
        work.rejected.append(rejection(job.row, work.suite, exc.stage, exc.reason, **work.scrub(exc.detail)))
    except Exception as exc:  # one instance's bug or broken input must not stop the batch
        detail = {"traceback": work.scrub("".join(traceback.format_exception(exc)))}
        work.rejected.append(rejection(job.row, work.suite, "error", f"{type(exc).__name__}: {exc}", **detail))
    return work


def instance_record(job: InstanceJob, work: Work, started: float) -> dict:
    """The result file's content: task rows, rejections, environment and where the time went."""
    record = {"instance_id": job.row["instance_id"], "tasks": work.tasks, "rejected": work.scrub(work.rejected)}
    if work.summary is not None:
        record["summary"] = work.summary
    if work.env is not None:  # where this instance's tasks were validated (an image may say which Python it had)
        environment = work.env.model_dump(include=ENVIRONMENT_FIELDS, exclude_none=True)
        record["environment"] = work.scrub({**environment, "python_version": work.python_version})
    seconds = time.monotonic() - started
    return record | {"seconds": seconds, "stages": work.clock.record(seconds)}


def staged_paths(tasks: list[dict]) -> list[str]:
    """What an instance publishes, relative to the suite (and to its export folder): only what a task row names."""
    names = [safe_name(task["instance_id"]) for task in tasks]
    return [rel for n in names for rel in (f"repos/{n}", f"ground_truth/{n}.json")]


def publish(out: Path, name: str, export: Path, tasks: list[dict]) -> None:
    """Move the accepted tasks' repos and ground truth into the suite, recording first what is about to move.

    Anything else staged (a crashed variant's tree) stays in the work folder, to be deleted."""
    staged = staged_paths(tasks)
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
        (export / rel).rename(target)
        failpoint("suite.moved-one", name)


def finish(job: InstanceJob, record: dict) -> None:
    """The result file, written last: from here on the instance is done; then its note and work folder go."""
    name = safe_name(job.row["instance_id"])
    write_atomic(result_path(job.out, job.row["instance_id"]), dumps(record))
    failpoint("suite.result-written", name)
    (job.out / ".build" / "moving" / f"{name}.json").unlink(missing_ok=True)
    failpoint("suite.note-removed", name)
    if not job.keep_work:
        shutil.rmtree(work_folder(job), ignore_errors=True)


def discard_partial(out: Path, name: str, root: Path) -> None:
    """What a killed run left of this instance: its work folder and anything it had begun to move."""
    moving = out / ".build" / "moving" / f"{name}.json"
    if moving.is_file():
        for rel in json.loads(moving.read_text()):
            target = out / rel
            shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
        moving.unlink()
    shutil.rmtree(root, ignore_errors=True)


def died(job: InstanceJob, exc: BaseException) -> None:
    """The worker process (or its Ray node) died under the instance: recorded as rejected, with why."""
    reason = f"worker process died: {type(exc).__name__}: {exc}"
    record = {"instance_id": job.row["instance_id"], "tasks": [], "seconds": 0.0}
    record["rejected"] = [rejection(job.row, job.config.kind, "error", reason)]
    discard_partial(job.out, safe_name(job.row["instance_id"]), work_folder(job))
    write_atomic(result_path(job.out, job.row["instance_id"]), dumps(record))
