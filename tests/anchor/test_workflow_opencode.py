"""The two-stage workflow end to end with OpenCode: the real binary, its real client, the relay, the scripted server."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from repoanchor.anchor.workflow import run_anchored
from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer
from repoanchor.scaffolds.opencode.adapter import OpenCode
from repoanchor.scaffolds.opencode.setup import find_opencode
from repoanchor.scaffolds.records import InfraError, Limits
from tests.support.bug_repo import ISSUE, make_bug_repo, patch_passes_tests
from tests.support.scripted import INSTRUCTION_TEXT, tool_call

try:
    find_opencode()
except InfraError as missing:  # pragma: no cover - the Makefile installs it
    pytest.skip(f"OPENCODE NOT INSTALLED: {missing.message}", allow_module_level=True)


@pytest.fixture(autouse=True)
def api_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")


def sent(server, start: int = 0) -> list[str]:
    return [json.dumps(request.body) for request in server.requests[start:]]


def test_opencode_stage1_writes_the_map_its_stray_edit_is_reverted_and_stage2_solves(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    with ScriptedServer() as server, LocalCheckout(repo) as env:
        calc, instruction = f"{env.workdir}/calc.py", f"{env.workdir}/INSTRUCTION.md"
        server.push(
            Reply("Mapping.", [tool_call("write", {"filePath": instruction, "content": INSTRUCTION_TEXT}, 1)]),
            Reply("", [tool_call("edit", {"filePath": calc, "oldString": "a - b", "newString": "a * b"}, 2)]),
            Reply("Map written."),
            Reply("", [tool_call("edit", {"filePath": calc, "oldString": "a - b", "newString": "a + b"}, 3)]),
            Reply("Fixed."),
        )
        model = ModelConfig(model="openai/scripted", api_base=server.base_url, max_retries=0, timeout=10)
        result = run_anchored(OpenCode(), ISSUE, env, model, Limits(steps=10), tmp_path / "out")
        stage2_requests = sent(server, 3)
    assert result.anchor_status == "ok"
    assert result.violations == [{"attempt": 1, "path": "calc.py", "change": "M"}]
    assert result.exit_status == "Finished"
    marker = "Make add() return a + b; run the tests."
    assert any(marker in body for body in stage2_requests)
    assert not any(marker in body for body in sent(server)[:1])
    assert "INSTRUCTION.md" not in result.patch
    assert "a * b" not in result.patch
    assert patch_passes_tests(repo, result.patch, tmp_path)
    assert [stage.steps for stage in result.stage1] == [3]
    assert result.stage2.steps == 2
    assert result.steps == 5
    assert result.input_tokens == 50
