"""RepoAnchor under mini-swe-agent's SWE-bench templates: a cached INSTRUCTION.md written under one template set is
not handed to a run under another (another system prompt is another exploration). Real mini, scripted server."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from repoanchor.anchor.cache import InstructionCache
from repoanchor.anchor.workflow import run_anchored
from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.mini.adapter import MiniSweAgent
from repoanchor.scaffolds.mini.templates import template_set
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from repoanchor.scaffolds.records import Limits
from tests.support.bug_repo import ISSUE, make_bug_repo
from tests.support.scripted import INSTRUCTION_TEXT, SUBMIT, turns, write_file_command

WRITE = write_file_command("INSTRUCTION.md", INSTRUCTION_TEXT)


@pytest.fixture(autouse=True)
def api_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")


def anchored(repo: Path, out: Path, cache: InstructionCache, templates: str) -> str:
    with ScriptedServer([*turns(WRITE, SUBMIT), *turns(SUBMIT)]) as server, LocalCheckout(repo) as env:
        model = ModelConfig(model="openai/scripted", api_base=server.base_url, max_retries=0, timeout=5)
        scaffold = MiniSweAgent(template_set(templates, stage_prompts=True))
        return run_anchored(scaffold, ISSUE, env, model, Limits(), out, cache=cache).anchor_status


def test_the_instruction_cache_tells_template_sets_apart(tmp_path):
    repo = make_bug_repo(tmp_path)
    cache = InstructionCache(tmp_path / "cache")
    assert anchored(repo, tmp_path / "ours", cache, "repoanchor") == "ok"
    assert anchored(repo, tmp_path / "minis", cache, "mini-swebench") == "ok"  # a miss: stage 1 ran again
    assert anchored(repo, tmp_path / "again", cache, "mini-swebench") == "cached"
