"""A real Ray cluster of several one-CPU nodes on this machine, each in folders of its own, for tests and benchmarks.

Every node's processes (raylet, workers) run with their own working folder, TMPDIR (where attempts run) and Ray
temp dir, all under a short /tmp folder: Ray's unix sockets live there and their paths may not exceed 107 bytes.
Ray also writes the head's address file under TMPDIR, so the node's folder keeps it and `ray.init()` elsewhere on
the machine never finds this cluster. Everything is shut down and removed on exit, however the block ends.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def node_environment(folder: Path) -> Iterator[None]:
    """Processes started inside inherit `folder` as working folder and `folder`/tmp as TMPDIR."""
    before, cwd = os.environ.get("TMPDIR"), Path.cwd()
    os.environ["TMPDIR"] = str(folder / "tmp")
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(cwd)
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before


def start_node(cluster, folder: Path):
    (folder / "tmp").mkdir()
    with node_environment(folder):
        return cluster.add_node(num_cpus=1, temp_dir=str(folder / "tmp" / "ray"), include_dashboard=False)


@contextmanager
def local_cluster(count: int = 2) -> Iterator[tuple[object, list]]:
    """(the cluster, its nodes, head first); connect with `RayExecutor(address=cluster.address)`."""
    from ray.cluster_utils import Cluster

    folders = [Path(tempfile.mkdtemp(prefix=f"ra-node{number}-")) for number in range(1, count + 1)]
    cluster = Cluster(shutdown_at_exit=True)
    try:
        nodes = [start_node(cluster, folder) for folder in folders]
        cluster.wait_for_nodes()
        yield cluster, nodes
    finally:
        cluster.shutdown()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
