"""`grade` and `suite validate` with `--executor ray`, on a two-node Ray cluster of this machine: the same grades
(byte-identical grade.json files) and the same validation summary as here; each node works in temporary folders
of its own from what it was sent (the repository as a bundle, the ground truth), never the driver's folders.
And a matrix unit that cannot be sent (its repository is gone) is recorded with the reason, not lost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.runs.grade_runs import GRADE, grade_matrix
from repoanchor.evals.runs.matrix import MatrixConfig
from repoanchor.evals.runs.run_matrix import run_matrix
from repoanchor.evals.suites.check import validate_suite
from repoanchor.evals.suites.original import build_original_suite
from tests.evals.test_grade_runs import ran_matrix
from tests.support.matrix_suite import make_suite, result_files, write_config
from tests.support.ray_cluster import local_cluster

pytestmark = pytest.mark.xdist_group("ray-cluster")


@pytest.fixture(scope="module")
def cluster():
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()
    with local_cluster(2) as (nodes, _):
        yield nodes
    assert not ray.is_initialized()


def grade_files(out: Path) -> dict[str, bytes]:
    return {path.parent.name: path.read_bytes() for path in sorted((out / "units").glob(f"*/{GRADE}"))}


def test_grades_made_on_the_cluster_are_the_ones_made_here(cluster, tmp_path: Path, monkeypatch):
    from repoanchor.evals.runs.grade_ray import RayGrader

    monkeypatch.setenv("OPENAI_API_KEY", "not-a-secret-scripted-servers-ignore-it")
    config = ran_matrix(tmp_path)
    copy = config.model_copy(update={"out": tmp_path / "runs-ray"})
    shutil.copytree(config.out, copy.out)
    here = grade_matrix(config, provider="local")
    with RayGrader(address=cluster.address) as grader:
        there = grade_matrix(copy, provider="local", grade_many=grader)
    assert there == here
    assert sum(bool(grade["resolved"]) for grade in there) == 3  # the oracle's three, the idle model's none
    assert len(grade_files(config.out)) == 6
    assert grade_files(copy.out) == grade_files(config.out)


def test_a_suite_validated_on_the_cluster_gives_the_summary_made_here(cluster, tmp_path: Path):
    fixture = tmp_path / "fixture"
    _, dataset = materialize_fixture(fixture)
    suite = tmp_path / "suite"
    build_original_suite(dataset, suite, repo_cache=fixture)
    truth = sorted((suite / "ground_truth").iterdir())[0]
    truth.write_text(truth.read_text() + "\n")  # one task fails here, by the manifest's hash, and there alike
    here = validate_suite(suite, provider="local")
    there = validate_suite(suite, provider="local", executor="ray", address=cluster.address)
    assert (here["tasks"], here["passed"]) == (3, 2)
    assert there == here


def test_a_unit_whose_repository_cannot_be_sent_is_recorded_as_crashed_with_the_reason(cluster, tmp_path, monkeypatch):
    from repoanchor.evals.runs.executor_ray import RayExecutor

    monkeypatch.setenv("OPENAI_API_KEY", "not-a-secret-nothing-is-asked")
    suite = make_suite(tmp_path, count=1)
    config = MatrixConfig.load(
        write_config(tmp_path / "m.yaml", "http://127.0.0.1:9/v1", conditions=[{"name": "plain"}], repeats=1)
    )
    shutil.rmtree(suite / "repos")
    with RayExecutor(address=cluster.address) as executor:
        summary = run_matrix(config, executor=executor, progress=False)
    assert summary.statuses["crashed"] == 1
    (record,) = result_files(config.out).values()
    assert "could not send" in record["error"]
    assert "environment_setup: git rev-parse" in record["error"]  # git's own words name the missing folder
