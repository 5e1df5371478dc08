"""templates=mini-swebench as a run setting: `repoanchor run --templates`, the matrix's `templates`, the papers'
presets. Real CLI, real mini-swe-agent, the scripted server; mini's swebench.yaml read from the installed package."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import jinja2
import pytest
import yaml
from typer.testing import CliRunner

from repoanchor import prompts
from repoanchor.evals.cli.main import app
from repoanchor.evals.cli.presets import with_matrix_preset
from repoanchor.evals.runs.fingerprint import digest, fingerprints
from repoanchor.evals.runs.matrix import MatrixConfig, expand
from repoanchor.scaffolds.mini.templates import swebench_config_path
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from tests.support.bug_repo import FIX_SED, ISSUE, make_bug_repo
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


def swebench(part: str, **variables) -> str:
    config = yaml.safe_load(swebench_config_path().read_text(encoding="utf-8"))
    return jinja2.Template(config["agent"][part], undefined=jinja2.StrictUndefined).render(**variables)


def run_cli(task_dir: Path, out: Path, replies, *args: str) -> tuple[object, list[list[dict]]]:
    with ScriptedServer(replies) as server:
        given = ["run", str(task_dir), "--model", "openai/scripted", "--api-base", server.base_url, "--env", "local"]
        result = runner.invoke(app, [*given, "--cost-limit", "0", "--out", str(out), *args], catch_exceptions=False)
    return result, [request.body["messages"] for request in server.requests]


def test_a_plain_run_sends_minis_swebench_templates_and_records_them(task_dir, tmp_path):
    out = tmp_path / "out"
    result, requests = run_cli(task_dir, out, turns(FIX_SED, SUBMIT), "--templates", "mini-swebench")
    assert result.exit_code == 0, result.output
    assert requests[0][0] == {"role": "system", "content": swebench("system_template")}
    assert requests[0][1] == {"role": "user", "content": swebench("instance_template", task=ISSUE)}
    record = json.loads((out / "run.json").read_text())
    assert (record["system_prompt"], record["prompt"]) == (requests[0][0]["content"], requests[0][1]["content"])
    assert record["templates"]["name"] == "mini-swebench"
    assert record["templates"]["file"] == "minisweagent/config/benchmarks/swebench.yaml"
    assert json.loads(result.stdout)["templates"] == "mini-swebench"


def test_hints_follow_the_issue_inside_minis_task(task_dir, tmp_path):
    result, requests = run_cli(
        task_dir, tmp_path / "out", turns(SUBMIT), "--templates", "mini-swebench", "--hints", "structural"
    )
    assert result.exit_code == 0, result.output
    task = f"{ISSUE.rstrip()}\n\n<hints>\n{prompts.hints('structural')}\n</hints>\n"
    assert requests[0][1]["content"] == swebench("instance_template", task=task)


def test_anchor_stages_keep_our_prompts_under_minis_system_template(task_dir, tmp_path):
    out = tmp_path / "out"
    replies = [*turns(write_file_command("INSTRUCTION.md", INSTRUCTION_TEXT), SUBMIT), *turns(FIX_SED, SUBMIT)]
    result, requests = run_cli(task_dir, out, replies, "--templates", "mini-swebench", "--anchor")
    assert result.exit_code == 0, result.output
    stage1 = json.loads((out / "stage1-1" / "run.json").read_text())
    assert requests[0][0]["content"] == swebench("system_template")
    assert requests[0][1]["content"] == stage1["prompt"]
    assert "<pr_description>" not in stage1["prompt"]
    assert "INSTRUCTION.md" in stage1["prompt"]
    assert stage1["templates"]["user_message"] == "RepoAnchor stage prompt (ours)"


def test_opencode_with_minis_templates_is_one_line_and_exit_2(task_dir, tmp_path):
    result = runner.invoke(app, ["run", str(task_dir), "--model", "openai/scripted", "--scaffold", "opencode",
                                 "--templates", "mini-swebench", "--out", str(tmp_path / "out")])  # fmt: skip
    assert result.exit_code == 2
    assert "templates 'mini-swebench' are mini-swe-agent's own; opencode has none" in result.output
    assert len(result.output.strip().splitlines()) == 1


def matrix_file(tmp_path: Path, task_dir: Path, **fields) -> Path:
    config = {"tasks": [str(task_dir)], "scaffolds": ["mini-swe-agent", "opencode"], "models": [{"name": "m"}]}
    path = tmp_path / "matrix.yaml"
    path.write_text(yaml.safe_dump({**config, **fields}))
    return path


def test_a_matrix_gives_minis_templates_to_mini_units_only(task_dir, tmp_path):
    units = expand(MatrixConfig.load(matrix_file(tmp_path, task_dir, templates="mini-swebench")))
    assert {unit.scaffold: unit.options.templates for unit in units} == {
        "mini-swe-agent": "mini-swebench", "opencode": "repoanchor",
    }  # fmt: skip


def test_our_templates_leave_existing_fingerprints_unchanged(task_dir, tmp_path):
    units = expand(MatrixConfig.load(matrix_file(tmp_path, task_dir)))
    prints = fingerprints(units, [])
    for unit in units:  # the options digest as the last release computed it: before templates, stage-1 rule
        later = {"instruction_cache", "templates", "anchor_stage1_tests"}
        before = unit.options.model_dump(mode="json", exclude=later)
        assert prints[unit.unit_id]["options"] == digest(before)
    theirs = expand(MatrixConfig.load(matrix_file(tmp_path, task_dir, templates="mini-swebench")))
    changed = fingerprints(theirs, [])
    assert [changed[u.unit_id]["options"] != prints[u.unit_id]["options"] for u in units] == [True, False]


PRESET_TEMPLATES = [("jagged-frontier", "mini-swebench"), ("repomirage", "mini-swebench"), ("repoanchor", "repoanchor")]


@pytest.mark.parametrize(("preset", "templates"), PRESET_TEMPLATES)
def test_the_presets_set_the_templates(task_dir, tmp_path, preset, templates):
    matrix = with_matrix_preset(MatrixConfig.load(matrix_file(tmp_path, task_dir)), preset)
    assert matrix.templates == templates
    assert matrix.model_dump(mode="json")["preset"]["run"]["templates"] == templates
    assert [unit.options.templates for unit in expand(matrix)] == [templates, "repoanchor"]
