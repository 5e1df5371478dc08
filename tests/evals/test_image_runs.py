"""Agents in the task's environment image: both scaffolds, driven by the oracle through the scripted server,
fix a fixture task at /testbed, run its tests there with the image's Python, and the patch grades as locally."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.demo.oracle import ORACLE_MODEL, OraclePolicy
from repoanchor.evals.demo.pipeline import oracle_truths
from repoanchor.evals.harness import grading, instance_env
from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.harness.suite_format import as_task, read_suite_tasks
from repoanchor.evals.runs.run_one import RunOptions, resolve_environment, run_task
from repoanchor.evals.suites.original import build_original_suite
from repoanchor.scaffolds.environments.registry import EnvironmentConfig
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from repoanchor.scaffolds.opencode.setup import find_opencode
from repoanchor.scaffolds.records import InfraError, Limits
from repoanchor.scaffolds.trajectories import trajectory
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.env_images import fixture_env_image_fixture  # noqa: F401

INSTANCE = "fixture__ledger-2"


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("image-runs")
    _, dataset = materialize_fixture(root / "fixture")
    build_original_suite(dataset, root / "suite", repo_cache=root / "fixture")
    return root / "suite", dataset


@pytest.mark.parametrize("scaffold", ["mini", "opencode"])
def test_both_scaffolds_fix_a_task_inside_its_image(suite, scaffold, fixture_env_image, tmp_path, monkeypatch):
    if scaffold == "opencode":
        try:
            find_opencode()
        except InfraError as missing:  # pragma: no cover - the Makefile installs it
            pytest.skip(f"OPENCODE NOT INSTALLED: {missing.message}")
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")
    folder, dataset = suite
    task = as_task(folder, next(row for row in read_suite_tasks(folder) if row.instance_id == INSTANCE))
    with ScriptedServer(responder=OraclePolicy(oracle_truths([folder]))) as server:
        model = ModelConfig(model=ORACLE_MODEL, api_base=server.base_url, max_retries=0)
        options = RunOptions(scaffold=scaffold, model=model, limits=Limits(steps=10),
                             environment=EnvironmentConfig(kind="image"))  # fmt: skip
        summary = run_task(task, options, tmp_path / "run")
    assert summary["image"] == fixture_env_image
    assert summary["exit_status"] in ("Submitted", "Finished"), summary
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    steps = trajectory.load(tmp_path / "run" / run["trajectory"]).actions
    tests = next(step for step in steps if "pytest" in (step.command or ""))
    assert " passed" in tests.output_excerpt, tests.output_excerpt  # the tests ran there, with the image's pytest
    assert "/testbed" in server.requests[0].body["messages"][0]["content"] + json.dumps(server.requests[0].body)
    patch = (tmp_path / "run" / "patch.diff").read_text()
    row = load_dataset(dataset).by_id()[INSTANCE]
    verdicts = []
    for provider in ("local", "image"):
        workdir = tmp_path / f"grade-{provider}"
        env = instance_env.prepare(row, provider, workdir, repo_cache=dataset.parent, cache_dir=tmp_path / "venvs")
        result = grading.run_tests(workdir, row, patch, env, timeout=300)
        verdicts.append(grading.grade(row, result.outcomes, result.status).status)
    assert verdicts == ["RESOLVED_FULL", "RESOLVED_FULL"]


def test_a_task_without_a_repo_field_has_no_image(tmp_path):
    from repoanchor.evals.harness.tasks import Task, TaskError

    task = Task(instance_id="mine", problem_statement="x", repo=tmp_path)
    with pytest.raises(TaskError, match="no environment image"):
        resolve_environment(EnvironmentConfig(kind="image"), task, "openai/gpt-4o")


@pytest.mark.parametrize(
    ("kind", "model", "has_repo", "expected", "noted"),
    [
        ("auto", "openai/oracle", True, "local", False),  # a trusted policy stays on the host
        ("auto", "openai/gpt-4o", False, "docker", True),  # a task directory: no image, the base container, said
        ("local", "openai/gpt-4o", True, "local", True),  # asked for: allowed, with the warning
        ("docker", "openai/gpt-4o", False, "docker", False),
    ],
)
def test_where_a_run_goes_by_default(tmp_path, kind, model, has_repo, expected, noted):
    from repoanchor.evals.harness.tasks import Task

    source = {"source_repo": "fixture/ledger", "version": "0.3"} if has_repo else {}
    task = Task(instance_id="t", problem_statement="x", repo=tmp_path, **source)
    resolved, note = resolve_environment(EnvironmentConfig(kind=kind), task, model)
    assert resolved.kind == expected
    assert bool(note) == noted


def test_the_trusted_policy_is_the_demos_oracle():
    from repoanchor.evals.runs.run_one import TRUSTED_POLICIES

    assert TRUSTED_POLICIES == (ORACLE_MODEL,)


def test_auto_puts_a_model_in_its_tasks_image(fixture_env_image, tmp_path):
    from repoanchor.evals.harness.tasks import Task

    task = Task(instance_id="t", problem_statement="x", repo=tmp_path, source_repo="fixture/ledger", version="0.3")
    resolved, note = resolve_environment(EnvironmentConfig(kind="auto"), task, "openai/gpt-4o")
    assert (resolved.kind, resolved.image, resolved.workdir, note) == ("docker", fixture_env_image, "/testbed", None)


def test_suite_images_bakes_one_runnable_image_per_task(suite, fixture_env_image, docker_engine, tmp_path):
    from typer.testing import CliRunner

    from repoanchor.evals.cli.suite import app

    folder, _ = suite
    result = CliRunner().invoke(app, ["images", str(folder), "--out", str(tmp_path / "images.json")])
    assert result.exit_code == 0, result.output
    made = json.loads((tmp_path / "images.json").read_text())
    assert sorted(made) == ["fixture__ledger-1", "fixture__ledger-2", "fixture__ledger-3"]
    try:
        for task_id, record in made.items():
            assert record["image"].startswith(f"repoanchor/sweb.eval.x86_64.{task_id.replace('__', '_1776_')}:")
            assert record["env_image"] == fixture_env_image
        probe = "pwd; git rev-list --count HEAD; python -c 'import ledger, pytest; print(ledger.__file__)'"
        out = docker_engine.containers.run(made[INSTANCE]["image"], ["bash", "-c", probe], remove=True,
                                           network_mode="none", user="1000:1000")  # fmt: skip
        assert out.decode().split() == ["/testbed", "1", "/testbed/ledger/__init__.py"]
    finally:
        for record in made.values():
            docker_engine.images.remove(record["image"], force=True)


def test_a_missing_environment_image_is_the_runs_infra_error_not_a_crash(suite, docker_engine, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")
    folder, _ = suite
    row = next(row for row in read_suite_tasks(folder) if row.instance_id == INSTANCE)
    task = as_task(folder, row).model_copy(update={"version": "no-such-version"})
    options = RunOptions(model=ModelConfig(model="openai/gpt-4o", api_base="http://127.0.0.1:9/v1"),
                         environment=EnvironmentConfig(kind="image"))  # fmt: skip
    summary = run_task(task, options, tmp_path / "run")
    assert (summary["exit_status"], summary["infra_error"]) == (None, "image_missing")
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["infra_error"] == "image_missing"
