"""`repoanchor grade --executor ray`: the same matrix graded here and on a two-node Ray cluster of this machine
gives byte-identical grade.json files; each node grades in its own temporary folder from the bundle it was sent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from repoanchor.evals.runs.grade_runs import GRADE, grade_matrix
from tests.evals.test_grade_runs import ran_matrix
from tests.support.ray_cluster import local_cluster

pytestmark = pytest.mark.xdist_group("ray-cluster")


def grade_files(out: Path) -> dict[str, bytes]:
    return {path.parent.name: path.read_bytes() for path in sorted((out / "units").glob(f"*/{GRADE}"))}


def test_grades_made_on_the_cluster_are_the_ones_made_here(tmp_path: Path, monkeypatch):
    ray = pytest.importorskip("ray")
    from repoanchor.evals.runs.grade_ray import RayGrader

    monkeypatch.setenv("OPENAI_API_KEY", "not-a-secret-scripted-servers-ignore-it")
    config = ran_matrix(tmp_path)
    copy = config.model_copy(update={"out": tmp_path / "runs-ray"})
    shutil.copytree(config.out, copy.out)
    here = grade_matrix(config, provider="local")
    assert not ray.is_initialized()
    with local_cluster(2) as (cluster, _), RayGrader(address=cluster.address) as grader:
        there = grade_matrix(copy, provider="local", grade_many=grader)
    assert not ray.is_initialized()
    assert there == here
    assert sum(bool(grade["resolved"]) for grade in there) == 3  # the oracle's three, the idle model's none
    assert len(grade_files(config.out)) == 6
    assert grade_files(copy.out) == grade_files(config.out)
