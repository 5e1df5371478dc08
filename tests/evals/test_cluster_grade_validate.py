"""`grade`, `suite validate`, `suite build` and `images build` with `--executor ray`, on a two-node Ray cluster of
this machine: the same grades (byte-identical grade.json files), the same validation summary, the same suite and the
same image as here; each node works in temporary folders of its own from what it was sent (repositories as bundles,
the ground truth, a dataset row, an image's plan), never the driver's folders. And a matrix unit that cannot be sent
(its repository is gone) is recorded with the reason, not lost."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from repoanchor.evals.demo.fixture_project import fixture_rows, materialize_fixture
from repoanchor.evals.runs.grade_runs import GRADE, grade_matrix
from repoanchor.evals.runs.matrix import MatrixConfig
from repoanchor.evals.runs.run_matrix import run_matrix
from repoanchor.evals.suites.build import build_suite
from repoanchor.evals.suites.check import validate_suite
from repoanchor.evals.suites.original import build_original_suite
from tests.evals.test_grade_runs import ran_matrix
from tests.evals.test_suite_resume import TABLES, assert_same_suite
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.env_images import CACHE, fixture_env_image_fixture  # noqa: F401
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


def two_instances_built_here(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The fixture's repositories, a dataset of two of its instances (ledger-1 and ledger-3: one per node) and
    their perturb suite built here by the process pool: (repo cache, dataset, suite)."""
    fixture = tmp_path / "fixture"
    _, full = materialize_fixture(fixture)
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("".join(line + "\n" for line in full.read_text().splitlines() if "ledger-2" not in line))
    here = tmp_path / "here"
    build_suite(dataset, "perturb", here, repo_cache=fixture, workers=2, progress=False)
    return fixture, dataset, here


def test_a_suite_built_on_the_cluster_is_the_one_built_here_and_resumes_a_killed_build(cluster, tmp_path: Path):
    """The perturb suite of two fixture instances (one per node) built here, then a copy of it, as a build killed
    while publishing leaves it, finished on the cluster: both instances are built there again (no result file),
    over ledger-1's stale published tasks and ledger-3's half-moved ones. assert_same_suite compares every table,
    the manifest without its timing (instance seconds and stages: clock readings, the only fields left out), each
    ground-truth file's bytes and each repository's tree and HEAD commit."""
    fixture, dataset, here = two_instances_built_here(tmp_path)
    there = tmp_path / "there"
    shutil.copytree(here, there, symlinks=True)
    for name in [*TABLES, "manifest.json"]:  # written at a build's end: a killed build has none
        (there / name).unlink()
    for result in (there / ".build" / "results").iterdir():
        result.unlink()
    shutil.rmtree(there / "repos" / "fixture__ledger-1")  # an earlier build's tasks, not today's: replaced
    shutil.copytree(there / "repos" / "fixture__ledger-3", there / "repos" / "fixture__ledger-1", symlinks=True)
    shutil.rmtree(there / "repos" / "fixture__ledger-3")  # its ground truth moved, its repository not yet
    note = ["repos/fixture__ledger-3", "ground_truth/fixture__ledger-3.json"]
    (there / ".build" / "moving" / "fixture__ledger-3.json").write_text(json.dumps(note))
    report = build_suite(dataset, "perturb", there, repo_cache=fixture, executor="ray", address=cluster.address)
    assert (report.tasks, report.rejected, report.skipped_done) == (2, 0, 0)
    assert_same_suite(here, there)


@pytest.mark.parametrize("command", ["build", "validate"])
def test_ray_refuses_a_venv_cache_folder_of_this_machine(command, tmp_path: Path):
    from typer.testing import CliRunner

    from repoanchor.evals.cli.suite import app

    args = [command, str(tmp_path), "--executor", "ray", "--venv-cache", str(tmp_path / "venvs")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "Ray nodes use their own venv caches" in result.output
    assert not (tmp_path / "venvs").exists()


def test_a_source_bundle_holds_the_base_commits_and_the_tags_describe_finds(tmp_path: Path):
    from repoanchor.evals.harness.instance_env import checkout
    from repoanchor.scaffolds.environments.bundle import bundle_sources, unpack_sources
    from repoanchor.scaffolds.environments.local import git

    source, commits = tmp_path / "source", []
    git(tmp_path, "init", "--quiet", str(source))
    for number in range(4):
        (source / "f.txt").write_text(f"{number}\n")
        git(source, "add", "f.txt")
        git(source, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", f"c{number}")
        commits.append(git(source, "rev-parse", "HEAD").strip())
    git(source, "-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", "v1.0", "-m", "one", commits[0])
    git(source, "tag", "v3.0", commits[3])  # after every base: not sent
    data, sent = bundle_sources(source, [commits[1], commits[2][:12], "HEAD"])
    assert sent == {commits[1]: commits[1], commits[2][:12]: commits[2]}  # HEAD is no commit id: left out
    copy = unpack_sources(data, tmp_path / "node" / "owner__name")
    assert git(copy, "tag").split() == ["v1.0"]
    assert git(copy, "cat-file", "-t", "v1.0").strip() == "tag"  # still annotated
    for base in (commits[1], commits[2][:12]):
        clone = checkout(copy, base, tmp_path / f"clone-{base}")
        assert git(clone, "describe", "--tags").strip() == git(source, "describe", "--tags", base).strip()


def test_an_image_built_on_the_cluster_is_the_one_built_here_and_is_found_when_built_again(
    cluster, docker_engine, fixture_env_image, tmp_path: Path
):
    """`images build --executor ray` of the fixture's one (repo, version), renamed to a repository of this test's
    own (fixture/ledger-ray-<random>): a fresh image, tagged and labelled as the local build tags it, that no other
    test's label lookup finds; removed at the end. The nodes' wheelhouse cache (--node-cache) holds a copy of the
    wheelhouse the fixture image's build filled in the tests' shared cache: no network. A second ray run, then a
    local one, find it built: the same image id, the same record (seconds aside) and the same stdout."""
    from typer.testing import CliRunner

    from repoanchor.evals.cli.main import app
    from repoanchor.evals.images.build import build_inputs

    repo = f"fixture/ledger-ray-{uuid.uuid4().hex[:8]}"
    rows = [{**row, "repo": repo} for row in fixture_rows()]
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    made = build_inputs(rows[0], None, CACHE)  # the local build's tag and labels, nothing built
    node_cache = tmp_path / "node-cache"  # the nodes' own: this wheelhouse alone, copied from the tests' cache
    shutil.copytree(made.wheels, node_cache / "wheels" / made.wheels.name)
    on_ray = ["--executor", "ray", "--address", cluster.address, "--node-cache", str(node_cache)]

    def build(name: str, *extra: str):
        args = [
            "images",
            "build",
            str(dataset),
            "--cache-dir",
            str(CACHE),
            "--out",
            str(tmp_path / f"{name}.json"),
            *extra,
        ]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        (record,) = json.loads((tmp_path / f"{name}.json").read_text())
        return result.stdout, {**record, "seconds": None}

    try:
        built_out, built = build("ray-1", *on_ray)
        assert (built["status"], built["image"], built["error"]) == ("built", made.tag, None)
        assert (node_cache / "wheels" / f"{made.wheels.name}.lock").is_file()  # the wheelhouse used: the nodes'
        image = docker_engine.images.get(made.tag)
        assert {**image.labels, **made.labels} == image.labels  # the labels (and digest) the local build gives
        found_out, found = build("ray-2", *on_ray)
        local_out, local = build("local")
        assert found["status"] == "cached"
        assert found == local == {**built, "status": "cached"}
        assert found_out == local_out == built_out == f"{made.tag}\n"
        assert docker_engine.images.get(made.tag).id == image.id  # found, not rebuilt
    finally:
        if docker_engine.images.list(name=made.tag):
            docker_engine.images.remove(made.tag, force=True)
