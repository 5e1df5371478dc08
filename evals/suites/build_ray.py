"""`suite build --executor ray`: each instance built as a Ray task on a node, in a temporary folder of its own;
the driver alone writes the suite folder, with the local build's own steps (publish.py).

Out: the instance's job (its dataset row and settings; no folder of the driver's) and its source repository as a
git bundle of the base commits the build needs and the tags reachable from them (`bundle_sources`), made once per
repository and sent once through the object store. Back: the instance's result record and its accepted tasks
(repositories and ground truth) as a tar.gz, which the driver unpacks into the instance's work folder and
publishes as the pool does; so the suite is the same, and a killed build resumes alike, with either executor.
A node uses its own venv cache, images and keyword cache. An instance whose source cannot be bundled (no clone
in the cache, a base commit the clone lacks) is built here instead, where it fails at once as it does locally.
A lost node's instance is sent again (pool_ray.py), then recorded as a dead worker's.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from repoanchor.evals.harness.datasets import safe_name
from repoanchor.evals.harness.failpoints import failpoint
from repoanchor.evals.harness.instance_env import cached_clone, source_repo
from repoanchor.evals.suites.pool_ray import RayJobs
from repoanchor.evals.suites.publish import (
    InstanceJob,
    build_instance,
    died,
    discard_partial,
    finish,
    instance_record,
    publish,
    run_instance,
    staged_paths,
    work_folder,
)
from repoanchor.scaffolds.environments.bundle import bundle_sources, unpack_sources
from repoanchor.scaffolds.records import InfraError

STAYS_HERE = Path("suite-stays-on-the-driver")
"""The suite folder a travelling job holds: relative and nonexistent, so a node that used it would fail."""


def build_on_ray(jobs: list[InstanceJob], address: str | None) -> None:
    """Build and publish every job's instance, on the Ray cluster at `address` where its source can be sent."""
    sources = _sources(jobs)
    sent = []
    for job in jobs:
        if job.row["base_commit"] in sources.get(job.row["repo"], (b"", {}))[1]:
            sent.append(job)
        else:
            run_instance(job)
    if not sent:
        return
    for job in sent:  # what a killed run left of these instances, as run_instance removes it first
        discard_partial(job.out, safe_name(job.row["instance_id"]), work_folder(job))
    by_id = {job.row["instance_id"]: job for job in sent}
    with RayJobs(address) as cluster:
        refs = {repo: cluster.put(bundle) for repo, (bundle, commits) in sources.items() if commits}
        parcels = [(replace(job, out=STAYS_HERE, repo_cache=None), refs[job.row["repo"]]) for job in sent]
        cluster.run(
            build_shipped,
            parcels,
            lambda parcel, exc: died(by_id[parcel[0].row["instance_id"]], exc),
            each=lambda parcel, shipped: publish_shipped(by_id[parcel[0].row["instance_id"]], shipped),
        )


def _sources(jobs: list[InstanceJob]) -> dict[str, tuple[bytes, dict[str, str]]]:
    """{repository name: (its bundle, {base commit: commit id} of those it holds)} for the repositories cloned in
    the cache; one bundle per repository, whatever the number of its instances."""
    revisions: dict[str, set[str]] = {}
    first: dict[str, InstanceJob] = {}
    for job in jobs:  # a loaded dataset's rows have both fields, as strings
        revisions.setdefault(job.row["repo"], set()).add(job.row["base_commit"])
        first.setdefault(job.row["repo"], job)
    sources = {}
    for repo, wanted in revisions.items():
        try:
            source = source_repo(first[repo].row, None, first[repo].repo_cache)
        except InfraError:  # no clone to send: each instance fails here as it would in a local build
            continue
        sources[repo] = bundle_sources(source, sorted(wanted))
    return sources


def build_shipped(job: InstanceJob, source: bytes) -> dict:
    """A Ray task: one instance built in a temporary folder of this node from its source bundle; its result
    record and `archive`, its accepted tasks as tar.gz bytes (paths relative to the suite)."""
    with tempfile.TemporaryDirectory(prefix="repoanchor-build-") as scratch:
        cache = Path(scratch) / "sources"
        unpack_sources(source, cached_clone(cache, job.row["repo"]))  # where source_repo looks
        here = replace(job, out=Path(scratch) / "suite", repo_cache=cache)
        started = time.monotonic()  # the instance's own time, as the pool's record counts it: no unpacking
        work = build_instance(here, work_folder(here))
        record = instance_record(here, work, started)
        return {"record": record, "archive": _pack(work.export, staged_paths(work.tasks))}


def publish_shipped(job: InstanceJob, shipped: dict) -> None:
    """An instance built on a node, published into the suite by the local build's steps."""
    name, export = safe_name(job.row["instance_id"]), work_folder(job) / "export"
    _unpack(shipped["archive"], export)
    failpoint("suite.built", name)
    publish(job.out, name, export, shipped["record"]["tasks"])
    finish(job, shipped["record"])


def _pack(export: Path, paths: list[str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:  # sources compress well at 1
        for rel in paths:
            archive.add(export / rel, arcname=rel)
    return buffer.getvalue()


def _unpack(data: bytes, export: Path) -> None:
    """The `tar` filter refuses members that would land outside `export` (absolute, `..`, through a link) but,
    unlike `data`, keeps symbolic links that point outside: a project's own repository may hold such links."""
    export.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(export, filter="tar")
