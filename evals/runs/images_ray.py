"""`images build --executor ray`: each (repo, version) planned here, its image built as a Ray task on a node.

Here: the plan (Python version, pins, build requirements, spec steps), made as the local build makes it (the
local provider's venv and the repository clone stay on this machine). Out: the plan alone, by value. On the node:
its own interpreter of the plan's Python version, its own wheelhouse cache (`node_cache`, a folder of the node;
default ~/.cache/repoanchor there) and its own Docker engine, with the local build's own steps (`build_planned`):
the same inputs give the same tag, so an image already built there is found, not rebuilt. Back: the image's name,
whether it was built or found, or the reason it failed. The driver alone makes the records, reports them and writes
`--out`, in the local build's order. A group whose node is lost is sent again (suites/pool_ray.py), then failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from repoanchor.evals.images.build import EnvImageRecord, attempt, build_planned, finish_record, new_record
from repoanchor.evals.images.requirements import EnvPlan, plan_for
from repoanchor.evals.suites.pool_ray import RayJobs
from repoanchor.scaffolds.environments.docker_container import BASE_IMAGE


def build_groups_on_ray(
    grouped: dict, repo_cache: Path | None, cache_dir: Path, address: str | None, node_cache: str | None = None,
    base: str = BASE_IMAGE, each: Callable[[EnvImageRecord], None] = lambda record: None,
) -> list[EnvImageRecord]:  # fmt: skip
    """Every group's record, in `grouped`'s order; `each(record)` here as each one is made."""
    records: dict[tuple, EnvImageRecord] = {}
    jobs, started = [], {}
    for key, rows in grouped.items():
        started[key], records[key] = time.monotonic(), new_record(key, rows)
        plan = attempt(records[key], plan_for, rows[0], repo_cache, Path(cache_dir) / "venvs")
        if plan is None:  # failed here, as the local build fails: nothing to send
            each(finish_record(records[key], None, time.monotonic() - started[key]))
        else:
            jobs.append((key, plan, node_cache, base))
    if not jobs:
        return list(records.values())
    planned = {job[0]: time.monotonic() - started[job[0]] for job in jobs}

    def arrived(job: tuple, answer: dict) -> None:
        record = records[job[0]]
        record.error = answer.get("error")
        each(finish_record(record, answer.get("made"), planned[job[0]] + answer["seconds"]))

    def lost(job: tuple, exc: BaseException) -> None:
        arrived(job, {"error": f"worker_lost: the Ray node building this image was lost: {exc}", "seconds": 0.0})

    with RayJobs(address) as cluster:
        cluster.run(build_on_node, jobs, lost, each=arrived)
    return list(records.values())


def build_on_node(key: tuple, plan: EnvPlan, node_cache: str | None, base: str) -> dict:
    """A Ray task: the planned image built (or found) with this node's interpreter, wheelhouse and engine;
    {"made": build_planned's answer or None, "error": the reason or None, "seconds"}."""
    started = time.monotonic()
    cache = Path(node_cache) if node_cache else Path.home() / ".cache" / "repoanchor"
    scratch = EnvImageRecord(repo=key[0], version=key[1], instances=[], status="failed")
    made = attempt(scratch, _build_here, plan, cache, base)
    return {"made": made, "error": scratch.error, "seconds": time.monotonic() - started}


def _build_here(plan: EnvPlan, cache: Path, base: str) -> dict:
    from repoanchor.evals.harness.venv_build import find_python

    return build_planned(replace(plan, python=find_python(plan.python_version)), cache, base)
