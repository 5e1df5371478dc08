"""Credentials are checked before the first run, and a unit that ended in an infrastructure error is not done.

Real `repoanchor eval` and `run` invocations (typer's in-process runner) on a one-task suite, mini-swe-agent
against the scripted server on 127.0.0.1 in a worker process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from repoanchor.evals.cli.eval_matrix import eval_command
from repoanchor.evals.cli.main import app as main_app
from repoanchor.scaffolds.models.credentials import (
    SINGLE_KEY,
    MissingCredentials,
    missing_variables,
    refuse_missing_credentials,
)
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer
from tests.support.matrix_suite import make_suite, oracle, result_files, write_config

KEY = "OPENAI_API_KEY"
eval_app = typer.Typer()
eval_app.command()(eval_command)
# litellm's first import takes seconds; the check itself must not. Imported here, once, as any run would.
missing_variables(ModelConfig(model="openai/gpt-4o"))


def invoke_eval(path: Path, *extra: str):
    return CliRunner().invoke(eval_app, [str(path), "--no-progress", "--workers", "1", *extra])


@pytest.fixture
def no_key(monkeypatch) -> None:
    for name in (KEY, "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("model", "api_base", "variable"),
    [
        ("openai/gpt-4o", None, "OPENAI_API_KEY"),
        ("anthropic/claude-sonnet-4", None, "ANTHROPIC_API_KEY"),
        ("openai/scripted", "http://127.0.0.1:9/v1", "OPENAI_API_KEY"),
        ("ollama/llama3", "http://127.0.0.1:11434", None),  # the base was all it needed
    ],
)
def test_each_provider_names_its_variable(no_key, monkeypatch, model, api_base, variable):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = ModelConfig(model=model, api_base=api_base)
    assert missing_variables(config) == ([variable] if variable else [])
    if variable:
        with pytest.raises(MissingCredentials, match=rf"model {model} needs {variable}, which is not set.* \(here\)$"):
            refuse_missing_credentials([config], ["here"])


@pytest.mark.parametrize("provider", sorted(SINGLE_KEY))
def test_the_fast_table_says_what_litellm_says(monkeypatch, provider: str):
    import litellm

    variable = SINGLE_KEY[provider]
    monkeypatch.delenv(variable, raising=False)
    assert litellm.validate_environment(model=f"{provider}/x")["missing_keys"] == [variable]
    monkeypatch.setenv(variable, "sk-test-0123456789")
    assert litellm.validate_environment(model=f"{provider}/x")["keys_in_environment"]


def test_a_fresh_process_refuses_without_importing_litellm(tmp_path: Path):
    """litellm's import takes seconds: the common providers are answered from the table."""
    path = tmp_path / "matrix.yaml"
    path.write_text("tasks: [t]\nscaffolds: [mini]\nmodels: [{name: gpt, model: openai/gpt-4o}]\n")
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom repoanchor.evals.cli.main import app\n"
        f"result = CliRunner().invoke(app, ['eval', {str(path)!r}])\n"
        "print(result.exit_code, 'litellm' in sys.modules)\n"
    )
    environment = {k: v for k, v in os.environ.items() if k not in (KEY, "OPENAI_BASE_URL", "OPENAI_API_BASE")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120)
    assert done.stdout.split() == ["2", "False"], done.stderr


def test_eval_without_the_key_stops_at_once_and_with_it_runs_the_unit(no_key, monkeypatch, tmp_path: Path):
    make_suite(tmp_path, count=1)
    with ScriptedServer(responder=oracle) as server:
        path = write_config(tmp_path / "matrix.yaml", server.base_url, conditions=[{"name": "plain"}], repeats=1)
        started = time.monotonic()
        refused = invoke_eval(path)
        seconds = time.monotonic() - started
        assert refused.exit_code == 2, refused.output
        assert seconds < 1.0
        assert refused.output.strip().splitlines() == [
            f"error: model openai/scripted needs {KEY}, which is not set; any value does for a local server, "
            f"litellm's client only wants one ({path}:models[0])"
        ]
        assert not (tmp_path / "out").exists()
        assert not server.requests

        monkeypatch.setenv(KEY, "sk-test-credentials-0123456789")
        ran = invoke_eval(path)
    assert ran.exit_code == 0, ran.output
    summary = json.loads(ran.stdout)
    assert (summary["ran"], summary["statuses"]["done"]) == (1, 1)


def test_run_without_the_key_exits_2_naming_it(no_key, tmp_path: Path):
    out = tmp_path / "out"
    result = CliRunner().invoke(main_app, ["run", str(tmp_path), "--model", "openai/gpt-4o", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: model openai/gpt-4o needs {KEY}, which is not set (--model)"
    assert not out.exists()


def test_a_unit_that_ended_in_an_infra_error_runs_again_on_a_plain_rerun(monkeypatch, tmp_path: Path):
    monkeypatch.setenv(KEY, "sk-test-credentials-0123456789")
    make_suite(tmp_path, count=1)
    failing = {"on": True}

    def respond(body: dict) -> Reply:
        return Reply(status=500, body={"error": {"message": "overloaded"}}) if failing["on"] else oracle(body)

    with ScriptedServer(responder=respond) as server:
        fields = {"conditions": [{"name": "plain"}], "repeats": 1, "max_infra_retries": 0}
        path = write_config(tmp_path / "matrix.yaml", server.base_url, **fields)
        assert invoke_eval(path).exit_code == 3
        (first,) = result_files(tmp_path / "out").values()
        assert first["status"] == "infra_error"
        failing["on"] = False
        kept = invoke_eval(path, "--no-retry-infra")
        assert (kept.exit_code, json.loads(kept.stdout)["already_done"]) == (3, 1)
        rerun = invoke_eval(path)
    assert rerun.exit_code == 0, rerun.output
    assert json.loads(rerun.stdout)["already_done"] == 0
    (record,) = result_files(tmp_path / "out").values()
    assert (record["status"], record["exit_status"]) == ("done", "Submitted")
