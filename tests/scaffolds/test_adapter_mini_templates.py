"""mini-swe-agent's own SWE-bench templates (templates=mini-swebench): read from the installed package, rendered by
mini with the task, recorded in run.json. Real mini, real litellm client, the scripted server on 127.0.0.1."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import jinja2
import pytest
import yaml

from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.mini.adapter import MiniSweAgent
from repoanchor.scaffolds.mini.templates import swebench_config_path, template_set
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from repoanchor.scaffolds.records import Limits, RunRecord
from tests.support.bug_repo import ISSUE, make_bug_repo
from tests.support.scripted import SUBMIT, turns


@pytest.fixture(autouse=True)
def api_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")


def swebench_yaml() -> dict:
    return yaml.safe_load(swebench_config_path().read_text(encoding="utf-8"))


def render(template: str, **variables) -> str:
    return jinja2.Template(template, undefined=jinja2.StrictUndefined).render(**variables)


def run(tmp_path: Path, templates, prompt: str, commands: list[str]) -> tuple[RunRecord, list]:
    repo = make_bug_repo(tmp_path)
    with ScriptedServer(turns(*commands)) as server, LocalCheckout(repo) as env:
        config = ModelConfig(model="openai/scripted", api_base=server.base_url, max_retries=0, timeout=2)
        record = MiniSweAgent(templates).run(prompt, env, config, Limits(), tmp_path / "out")
    return record, [request.body["messages"] for request in server.requests]


def test_the_installed_swebench_yaml_is_read_not_copied():
    path = swebench_config_path()
    assert path.is_file()
    assert path.parts[-4:] == ("minisweagent", "config", "benchmarks", "swebench.yaml")
    root = Path(__file__).parents[2]
    tracked = subprocess.run(["git", "-C", str(root), "ls-files", "*swebench*.yaml"], capture_output=True, text=True)
    assert tracked.stdout == ""  # never a copy in our tree


def test_first_request_is_minis_swebench_templates_with_the_task(tmp_path):
    config = swebench_yaml()
    long_output = "python -c \"print('x' * 12000)\""
    record, requests = run(tmp_path, template_set("mini-swebench"), ISSUE, [long_output, SUBMIT])
    system, user = requests[0][0], requests[0][1]
    assert system == {"role": "system", "content": render(config["agent"]["system_template"])}
    assert user == {"role": "user", "content": render(config["agent"]["instance_template"], task=ISSUE)}
    assert "<pr_description>" in user["content"]
    assert ISSUE in user["content"]
    # The observation too is mini's SWE-bench one: a long output is elided, head and tail shown.
    assert "<elided_chars>" in requests[1][-1]["content"]
    assert (record.system_prompt, record.prompt) == (system["content"], user["content"])
    saved = RunRecord.model_validate_json((tmp_path / "out" / "run.json").read_text())
    assert saved.templates["name"] == "mini-swebench"
    assert saved.templates["file"] == "minisweagent/config/benchmarks/swebench.yaml"
    assert set(saved.templates) == {"name", "file", "mini_swe_agent", "sha256"}


def test_anchor_stages_keep_our_prompt_under_minis_system_template(tmp_path):
    stage = "Explore the repository and write INSTRUCTION.md about {{ braces }}.\n"
    record, requests = run(tmp_path, template_set("mini-swebench", stage_prompts=True), stage, [SUBMIT])
    assert requests[0][0]["content"] == render(swebench_yaml()["agent"]["system_template"])
    assert requests[0][1]["content"] == stage  # verbatim, not wrapped as a PR description
    assert record.templates["user_message"] == "RepoAnchor stage prompt (ours)"


def test_our_templates_are_recorded_by_name(tmp_path):
    record, requests = run(tmp_path, None, ISSUE, [SUBMIT])
    assert record.templates == {"name": "repoanchor"}
    assert requests[0][1]["content"] == ISSUE
    assert "COMPLETE_TASK" in requests[0][0]["content"]


def test_an_unknown_template_set_is_refused():
    with pytest.raises(ValueError, match="unknown templates 'swe-agent'"):
        template_set("swe-agent")
