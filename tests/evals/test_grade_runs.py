"""Grading a run matrix from its files: the original suite of the ledger fixture, the oracle and an idle model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from repoanchor.evals.analysis.results.write import write_results
from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.demo.oracle import ORACLE_MODEL, OraclePolicy
from repoanchor.evals.demo.pipeline import oracle_truths
from repoanchor.evals.harness.failpoints import ENV as FAILPOINT_ENV
from repoanchor.evals.runs.executors import LocalPool
from repoanchor.evals.runs.grade_runs import GRADE, SCRATCH, grade_matrix
from repoanchor.evals.runs.matrix import MatrixConfig
from repoanchor.evals.runs.run_matrix import run_matrix
from repoanchor.evals.suites.original import build_original_suite
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.env_images import fixture_env_image_fixture  # noqa: F401
from tests.support.scripted import SUBMIT, turn

pytestmark = pytest.mark.xdist_group("matrix")


def ran_matrix(tmp_path: Path, second=None, name: str = "idle") -> MatrixConfig:
    """The fixture's original suite run by the oracle and a second scripted policy (idle unless given; mini,
    2 workers): 6 finished units."""
    fixture = tmp_path / "fixture"
    _, dataset = materialize_fixture(fixture)
    suite = tmp_path / "suites" / "original"
    manifest = build_original_suite(dataset, suite, repo_cache=fixture)
    assert manifest["tasks"] == 3
    tasks = [json.loads(line) for line in (suite / "tasks.jsonl").read_text().splitlines()]
    assert all("patch" not in row and "test_patch" not in row for row in tasks)
    with (
        ScriptedServer(responder=OraclePolicy(oracle_truths([suite]))) as oracle,
        ScriptedServer(responder=second or (lambda body: turn(SUBMIT))) as idle,
    ):
        config = MatrixConfig.model_validate(
            {
                "suites": [str(suite)],
                "scaffolds": ["mini"],
                "models": [
                    {"name": "oracle", "model": ORACLE_MODEL, "api_base": oracle.base_url},
                    {"name": name, "model": f"openai/{name}", "api_base": idle.base_url},
                ],
                "conditions": [{"name": "plain"}],
                "repeats": 1,
                "limits": {"cost": 0},  # scripted policies have no price: no cost limit, said so
                "workers": 2,
                "out": str(tmp_path / "runs"),
                "environment": {"kind": "local"},  # scripted policies: known commands
            }
        )
        executor = LocalPool(2)
        try:
            summary = run_matrix(config, executor=executor, progress=False)
        finally:
            executor.close()
    assert summary.statuses["done"] == 6
    return config


def test_the_oracle_resolves_every_task_an_idle_model_none(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-secret-scripted-servers-ignore-it")
    config = ran_matrix(tmp_path)
    grades = grade_matrix(config, provider="local")
    outcome = {(g["model"], g["instance_id"]): g["resolved"] for g in grades}
    assert outcome == {
        (model, f"fixture__ledger-{i}"): model == "oracle" for model in ("oracle", "idle") for i in (1, 2, 3)
    }
    resolved = next(g for g in grades if g["model"] == "oracle")
    assert resolved["f2p"]["failure"] == []
    assert resolved["p2p"]["failure"] == []
    # Redoable from files: a second pass reads the grade files instead of running tests again.
    files = sorted((tmp_path / "runs" / "units").glob(f"*/{GRADE}"))
    stamps = [path.stat().st_mtime_ns for path in files]
    assert grade_matrix(config, provider="local") == grades
    assert [path.stat().st_mtime_ns for path in files] == stamps

    # Killed (its whole process group) while a clone of the second unit's repository was being graded:
    # the next grading removes that clone and ends with the same grades.
    yaml_config = tmp_path / "matrix.yaml"
    yaml_config.write_text(json.dumps(config.model_dump(mode="json")))
    second = sorted(path.parent.name for path in files)[1]
    command = [
        sys.executable,
        "-c",
        "from repoanchor.evals.cli.main import app; app()",
        "grade",
        str(yaml_config),
        "--redo",
        "--provider",
        "local",
    ]
    env = {**os.environ, FAILPOINT_ENV: f"grade.scratch-made@{second}"}
    killed = subprocess.run(command, env=env, start_new_session=True, capture_output=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    scratch = tmp_path / "runs" / SCRATCH
    assert [p.name for p in scratch.iterdir() if p.name != "lock"], "the killed grade left no clone to clean"
    assert grade_matrix(config, provider="local") == grades
    assert [p.name for p in scratch.iterdir()] == ["lock"]


def test_matrix_grades_in_environment_images_equal_local_ones(tmp_path: Path, monkeypatch, fixture_env_image):
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-secret-scripted-servers-ignore-it")
    config = ran_matrix(tmp_path)
    local = grade_matrix(config, provider="local")
    images = grade_matrix(config, provider="image", redo=True)
    assert {g["provider"] for g in images} == {"image"}
    assert {g["image"] for g in images} == {fixture_env_image}
    verdict = ("unit_id", "resolved", "status", "f2p", "p2p")
    assert [{k: g[k] for k in verdict} for g in images] == [{k: g[k] for k in verdict} for g in local]
    assert sum(g["resolved"] for g in images) == 3


OVERFLOW = {"error": {"message": "This model's maximum context length is 8192 tokens.",
                      "code": "context_length_exceeded", "type": "invalid_request_error"}}  # fmt: skip


def mixed_policy(body: dict):
    """Gives up on ledger-1 (submits nothing); on the others it edits once, then overflows the context window."""
    task = body["messages"][1]["content"]
    if "thousands separators" in task:
        return turn(SUBMIT)
    if sum(m.get("role") == "assistant" for m in body["messages"]) == 0:
        return turn("echo '# started' >> ledger/money.py")
    return Reply(status=400, body=OVERFLOW)


def test_context_overflows_are_graded_failures_never_retried_and_counted(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-secret-scripted-servers-ignore-it")
    config = ran_matrix(tmp_path, mixed_policy, name="mixed")
    grades = [g for g in grade_matrix(config, provider="local") if g["model"] == "mixed"]
    overflowed = [g for g in grades if g["exit_status"] == "ContextWindowExceeded"]
    assert len(grades) == 3  # every unit of the model is in the denominator
    assert len(overflowed) == 2  # ledger-2 and ledger-3; ledger-1 was given up
    for grade in overflowed:
        assert (grade["graded"], grade["resolved"]) == (True, False)
        assert grade["patch_lines"] > 0  # the partial patch was graded
        result = json.loads((Path(config.out) / "units" / grade["unit_id"] / "result.json").read_text())
        assert len(result["attempts"]) == 1  # a deterministic refusal is not retried
    # The results tables count them: three graded units, none an infrastructure error, rate 0 both ways.
    summary = write_results([Path(config.out)], tmp_path / "results")
    assert summary["problems"] == []
    counts = pd.read_csv(tmp_path / "results" / "outcomes.csv").set_index("model").loc["mixed"]
    assert (counts["units"], counts["graded"], counts["infra"], counts["resolved"]) == (3, 3, 0, 0)
    assert counts["rate"] == counts["rate_infra_unresolved"] == 0
    units = pd.read_csv(tmp_path / "results" / "units.csv")
    assert sorted(units.loc[units["model"] == "mixed", "exit_status"]) == [
        "ContextWindowExceeded", "ContextWindowExceeded", "Submitted"
    ]  # fmt: skip


GAMING_CONFTEST = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""


def report_rewriter(body: dict):
    """Fixes nothing: adds a conftest.py whose hook reports every test as passed, then submits."""
    if sum(m.get("role") == "assistant" for m in body["messages"]) == 0:
        return turn(f"cat > conftest.py <<'EOF'\n{GAMING_CONFTEST}EOF")
    return turn(SUBMIT)


def test_a_patch_that_rewrites_the_test_reports_is_stripped_before_grading(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-secret-scripted-servers-ignore-it")
    config = ran_matrix(tmp_path, second=report_rewriter, name="gamer")
    kept = {
        g["instance_id"]: g for g in grade_matrix(config, provider="local", test_edits="keep") if g["model"] == "gamer"
    }
    assert all(g["resolved"] for g in kept.values())  # the attack works when nothing guards the tests
    graded = [g for g in grade_matrix(config, provider="local") if g["model"] == "gamer"]  # policy changed: regraded
    assert [g["resolved"] for g in graded] == [False, False, False]
    assert all(g["test_edit_policy"] == "strip" for g in graded)
    assert all(list(g["test_edits"]) == ["conftest.py"] for g in graded)
    oracle = [g for g in grade_matrix(config, provider="local") if g["model"] == "oracle"]
    assert all(g["resolved"] and g["test_edits"] == {} for g in oracle)  # a fix alone is graded as before
