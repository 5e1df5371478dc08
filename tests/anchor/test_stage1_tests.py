"""Stage 1 under the RepoMirage rule: with stage1_tests=forbidden the prompt forbids test runs and each one is
recorded as a violation with its command; with our default (allowed) the same run records none. Real
mini-swe-agent, real litellm, the scripted server, a real checkout."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from repoanchor.anchor.workflow import run_anchored
from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.mini.adapter import MiniSweAgent
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from repoanchor.scaffolds.records import Limits
from tests.support.bug_repo import FIX_SED, ISSUE, make_bug_repo
from tests.support.scripted import INSTRUCTION_TEXT, SUBMIT, turns, write_file_command

TEST_RUN = "python -m pytest -q"


@pytest.fixture(autouse=True)
def api_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")


@pytest.mark.parametrize(
    ("rule", "prompt_says", "test_violations"),
    [
        ("forbidden", "do NOT run the repository's tests", [{"attempt": 1, "change": "test-run", "command": TEST_RUN}]),
        ("allowed", "You may read and run anything.", []),
    ],
)
def test_a_stage1_test_run_is_a_violation_only_where_forbidden(tmp_path: Path, rule, prompt_says, test_violations):
    repo = make_bug_repo(tmp_path)
    stage1 = turns("cat calc.py", TEST_RUN, write_file_command("INSTRUCTION.md", INSTRUCTION_TEXT), SUBMIT)
    stage2 = turns(FIX_SED, SUBMIT)
    with ScriptedServer([*stage1, *stage2]) as server:
        model = ModelConfig(model="openai/scripted", api_base=server.base_url, max_retries=0, timeout=5)
        with LocalCheckout(repo) as env:
            result = run_anchored(MiniSweAgent(), ISSUE, env, model, Limits(), tmp_path / "out", stage1_tests=rule)
        first_prompt = server.requests[0].body["messages"][1]["content"]
    assert prompt_says in first_prompt
    assert result.anchor_status == "ok"
    assert result.stage1_tests == rule
    assert [{k: v for k, v in item.items() if k != "step_index"} for item in result.violations] == test_violations
    assert all(item["step_index"] == 1 for item in result.violations)  # the second command of stage 1
    assert result.exit_status == "Submitted"  # a violation is recorded, the run goes on
