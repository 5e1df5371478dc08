"""`repoanchor run`: one task end to end through the real CLI, mini-swe-agent and the scripted server."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from tests.support.bug_repo import FIX_SED, ISSUE, make_bug_repo, patch_passes_tests
from tests.support.scripted import INSTRUCTION_TEXT, SUBMIT, turns, write_file_command

runner = CliRunner()


@pytest.fixture(autouse=True)
def api_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "task"
    make_bug_repo(folder)
    (folder / "task.json").write_text(
        json.dumps({"instance_id": "demo__calc-1", "problem_statement": ISSUE, "repo_path": "calc"})
    )
    return folder


def cli(*args: str):
    """`repoanchor run` on the host: the scripted replies' commands are known (a model would get a container).
    The scripted server has no price unless a test gives one: its cost limit is off unless the test sets it."""
    given = args if "--cost-limit" in args or "--price" in args else (*args, "--cost-limit", "0")
    return runner.invoke(app, ["run", *given, "--env", "local"], catch_exceptions=False)


def test_a_plain_run_with_structural_hints(task_dir: Path, tmp_path: Path):
    out = tmp_path / "out"
    with ScriptedServer(turns(FIX_SED, SUBMIT)) as server:
        result = cli(
            str(task_dir),
            "--model",
            "openai/scripted",
            "--api-base",
            server.base_url,
            "--hints",
            "structural",
            "--out",
            str(out),
        )
        sent = server.requests[0].body["messages"][1]["content"]
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["exit_status"] == "Submitted"
    assert summary["condition"] == "plain+hints:structural"
    assert "<hints>" in sent
    assert json.loads((out / "run.json").read_text())["prompt"] == sent
    assert patch_passes_tests(task_dir / "calc", (out / "patch.diff").read_text(), tmp_path)


def test_an_anchored_run(task_dir: Path, tmp_path: Path):
    out = tmp_path / "out"
    replies = [*turns(write_file_command("INSTRUCTION.md", INSTRUCTION_TEXT), SUBMIT), *turns(FIX_SED, SUBMIT)]
    with ScriptedServer(replies) as server:
        result = cli(
            str(task_dir), "--model", "openai/scripted", "--api-base", server.base_url, "--anchor", "--out", str(out)
        )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["anchor_status"] == "ok"
    assert summary["steps"] == 4
    assert (out / "INSTRUCTION.md").is_file()
    assert "INSTRUCTION.md" not in (out / "patch.diff").read_text()


def test_a_model_server_that_is_down_exits_3_with_the_infra_error(task_dir: Path, tmp_path: Path):
    with ScriptedServer() as server:
        url = server.base_url
    result = cli(str(task_dir), "--model", "openai/scripted", "--api-base", url, "--out", str(tmp_path / "out"))
    assert result.exit_code == 3
    assert json.loads(result.stdout)["infra_error"] == "model_unreachable"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{missing}", "--model", "m"], "neither a task directory nor DATASET#INSTANCE_ID"),
        (["{task}", "--model", "m", "--scaffold", "aider"], "'aider' is not one of 'mini'"),
        (["{task}", "--model", "m", "--hints", "loud"], "'loud' is not one of 'none', 'structural'"),
        (["{task}"], "give the model"),
        (["{data}#nope", "--model", "m", "--repo", "{task}"], "no row with instance_id 'nope'"),
        (["{task}", "--model", "openai/local-x"], "openai/local-x: no price"),  # the default 3 USD limit
        (["{task}", "--model", "m", "--price", "2.5"], "is not INPUT,OUTPUT"),
    ],
)
def test_bad_input_is_named_and_exits_2(task_dir: Path, tmp_path: Path, args, message):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"instance_id": "x", "problem_statement": "p"}) + "\n")
    paths = {"missing": str(tmp_path / "absent"), "task": str(task_dir), "data": str(data)}
    result = runner.invoke(app, ["run", *(a.format(**paths) for a in args)])
    assert result.exit_code == 2
    assert message in result.output


def test_a_suite_task_runs_from_the_suite_folder(tmp_path: Path):
    from repoanchor.evals.harness.task_load import load_task

    suite = tmp_path / "suite"
    repo = make_bug_repo(suite / "repos")
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    row = {
        "instance_id": "calc-1__spt-1",
        "problem_statement": ISSUE,
        "base_commit": head,
        "repoanchor_suite": "spt",
        "repoanchor_repo": "repos/calc",
        "repoanchor_source_instance": "calc-1",
    }
    (suite / "tasks.jsonl").write_text(json.dumps(row) + "\n")
    task = load_task(f"{suite}#calc-1__spt-1")
    assert (task.repo, task.base_commit, task.problem_statement) == (repo.resolve(), head, ISSUE)
    with pytest.raises(ValueError, match="no task 'nope'"):
        load_task(f"{suite}#nope")
    (suite / "tasks.jsonl").write_text(json.dumps({**row, "patch": "diff"}) + "\n")
    with pytest.raises(ValueError, match="ground truth fields"):
        load_task(f"{suite}#calc-1__spt-1")


def test_a_price_makes_the_cost_limit_bind(task_dir: Path, tmp_path: Path):
    with ScriptedServer(turns(FIX_SED, SUBMIT)) as server:
        args = ["--model", "openai/scripted", "--api-base", server.base_url, "--price", "1000,1000"]
        result = cli(str(task_dir), *args, "--cost-limit", "0.01", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["exit_status"] == "LimitsExceeded"  # one reply (10 + 5 tokens) costs 0.015 USD
