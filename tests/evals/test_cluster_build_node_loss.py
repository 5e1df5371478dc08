"""`suite build --executor ray` when a node dies under an instance it is building: the instance is sent again, to
the node that is left, and the suite is byte for byte the one built here (RayJobs' retry, on the build path)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from repoanchor.evals.suites.build import build_suite
from tests.evals.test_cluster_grade_validate import two_instances_built_here
from tests.evals.test_suite_resume import assert_same_suite
from tests.support.ray_cluster import local_cluster

pytestmark = pytest.mark.xdist_group("ray-cluster")
WAIT = 300  # seconds; only a broken build waits this long


def kill_while_building(cluster, worker, tmpdir: Path, killed: list, errors: list, stop: threading.Event) -> None:
    """Remove `worker` as soon as an instance build's scratch folder appears in its TMPDIR (a build takes seconds:
    the folder is there from the task's start to its end), whatever the machine's load."""
    try:
        deadline = time.monotonic() + WAIT
        while not stop.is_set() and time.monotonic() < deadline:
            building = sorted(p.name for p in tmpdir.glob("repoanchor-build-*"))
            if building:
                cluster.remove_node(worker)
                killed.extend(building)
                return
            time.sleep(0.05)
    except BaseException as exc:  # seen by the test thread, which asserts on it
        errors.append(exc)


def test_an_instance_whose_node_dies_is_built_again_on_the_node_left(tmp_path: Path):
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()
    fixture, dataset, here = two_instances_built_here(tmp_path)
    there = tmp_path / "there"
    killed, errors, stop = [], [], threading.Event()
    with local_cluster(2) as (cluster, (_, worker)):
        tmpdir = Path(worker.get_temp_dir_path()).parent  # the node's own TMPDIR (ray_cluster.start_node)
        killer = threading.Thread(target=kill_while_building, args=(cluster, worker, tmpdir, killed, errors, stop))
        killer.start()
        try:
            report = build_suite(dataset, "perturb", there, repo_cache=fixture, executor="ray", address=cluster.address)
        finally:
            stop.set()
            killer.join()
    assert not ray.is_initialized()
    assert not errors, errors
    assert killed, "no instance was ever built on the second node"
    assert (report.tasks, report.rejected, report.skipped_done) == (2, 0, 0)
    assert_same_suite(here, there)
