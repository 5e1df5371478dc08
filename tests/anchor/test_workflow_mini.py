"""The two-stage workflow end to end with mini-swe-agent: real agent, real litellm, scripted server, real worktree."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from repoanchor.anchor.cache import InstructionCache
from repoanchor.anchor.workflow import run_anchored
from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.mini.adapter import MiniSweAgent
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer
from repoanchor.scaffolds.records import Limits
from tests.support.bug_repo import FIX_SED, ISSUE, make_bug_repo, patch_passes_tests
from tests.support.scripted import INSTRUCTION_TEXT, SUBMIT, turns, write_file_command

INSTRUCTION = INSTRUCTION_TEXT
WRITE = write_file_command("INSTRUCTION.md", INSTRUCTION)


@pytest.fixture(autouse=True)
def api_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")


def anchored(server, repo: Path, out: Path, limits: Limits | None = None, **kwargs):
    model = ModelConfig(model="openai/scripted", api_base=server.base_url, max_retries=0, timeout=5)
    with LocalCheckout(repo) as env:
        return run_anchored(MiniSweAgent(), ISSUE, env, model, limits or Limits(), out, **kwargs)


def user_messages(server, start: int = 0) -> list[str]:
    return [r.body["messages"][1]["content"] for r in server.requests[start:] if len(r.body["messages"]) == 2]


def test_stage1_writes_the_map_a_stray_edit_is_reverted_and_stage2_solves_from_it(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    stage1 = turns("cat calc.py", FIX_SED, WRITE, SUBMIT)  # the sed is a violation: stage 1 must not fix
    stage2 = turns("cat INSTRUCTION.md", FIX_SED, SUBMIT)
    with ScriptedServer([*stage1, *stage2]) as server:
        result = anchored(server, repo, tmp_path / "out")
    assert result.anchor_status == "ok"
    assert result.violations == [{"attempt": 1, "path": "calc.py", "change": "M"}]
    assert result.exit_status == "Submitted"
    stage1_prompt, stage2_prompt = user_messages(server)
    assert "Do NOT fix the task now" in stage1_prompt
    assert INSTRUCTION.strip() in stage2_prompt
    assert ISSUE in stage2_prompt
    # Stage 2 started from the reverted tree: its first command saw INSTRUCTION.md, the fix came from stage 2.
    assert "INSTRUCTION.md" not in result.patch
    assert "+    return a + b" in result.patch
    assert patch_passes_tests(repo, result.patch, tmp_path)
    assert [stage.steps for stage in result.stage1] == [4]
    assert result.stage2.steps == 3
    assert result.steps == 7
    assert result.input_tokens == 7 * 10
    assert (tmp_path / "out" / "INSTRUCTION.md").read_text().strip() == INSTRUCTION.strip()
    assert (tmp_path / "out" / "anchored.json").is_file()
    assert (tmp_path / "out" / "stage1-1" / "trajectory.json").is_file()
    assert (tmp_path / "out" / "stage2" / "run.json").is_file()


def test_a_shared_budget_gives_stage2_what_stage1_left(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    stage1 = turns("cat calc.py", WRITE, SUBMIT)  # 3 of the 6 steps
    stage2 = turns(FIX_SED, "cat calc.py", "ls", "ls")  # would need 4: stopped after 3, the fix kept
    with ScriptedServer([*stage1, *stage2]) as server:
        result = anchored(server, repo, tmp_path / "out", Limits(steps=6), budget="shared")
    assert result.budget == "shared"
    assert [(given["stage"], given["steps"]) for given in result.stage_limits] == [("stage1-1", 6), ("stage2", 3)]
    assert result.stage2.exit_status == "LimitsExceeded"
    assert result.steps == 6  # never more than a plain run's limit
    assert "+    return a + b" in result.patch


def test_a_shared_budget_spent_in_stage1_leaves_no_stage2(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    with ScriptedServer(turns("ls", WRITE, SUBMIT)) as server:
        result = anchored(server, repo, tmp_path / "out", Limits(steps=3), budget="shared")
        assert server.pending == 0
    assert result.anchor_status == "ok"
    assert result.stage2 is None
    assert result.exit_status == "LimitsExceeded"
    assert [given["stage"] for given in result.stage_limits] == ["stage1-1"]


def test_separate_budgets_give_each_stage_the_full_limits(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    with ScriptedServer([*turns("ls", WRITE, SUBMIT), *turns(FIX_SED, SUBMIT)]) as server:
        result = anchored(server, repo, tmp_path / "out", Limits(steps=3))
    assert [given["steps"] for given in result.stage_limits] == [3, 3]
    assert result.exit_status == "Submitted"


def test_a_malformed_map_gets_one_retry_with_the_problems_as_feedback(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    first = turns(write_file_command("INSTRUCTION.md", "## Plan\nfix it"), SUBMIT)
    second = turns(WRITE, SUBMIT)
    stage2 = turns(FIX_SED, SUBMIT)
    with ScriptedServer([*first, *second, *stage2]) as server:
        result = anchored(server, repo, tmp_path / "out")
    assert result.anchor_status == "ok_after_retry"
    retry_prompt = user_messages(server)[1]
    assert "was not accepted: missing section: Repository map" in retry_prompt
    assert len(result.stage1) == 2
    assert result.stage2 is not None


@pytest.mark.parametrize(
    ("stage1_commands", "status", "problem"),
    [
        (("ls",), "missing", "INSTRUCTION.md was not written"),
        (("touch INSTRUCTION.md",), "empty", "INSTRUCTION.md is empty"),
        ((write_file_command("INSTRUCTION.md", "just notes"),), "malformed", "missing section: Plan"),
    ],
)
def test_no_acceptable_map_after_the_retry_stops_before_stage2(tmp_path: Path, stage1_commands, status, problem):
    repo = make_bug_repo(tmp_path)
    attempt = turns(*stage1_commands, SUBMIT)
    with ScriptedServer([*attempt, *attempt]) as server:
        result = anchored(server, repo, tmp_path / "out")
        assert server.pending == 0
    assert result.anchor_status == status
    assert problem in result.problems
    assert len(result.stage1) == 2
    assert result.stage2 is None
    assert result.exit_status is None
    assert result.patch == ""


def test_a_stage1_step_limit_is_recorded_and_not_retried(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    with ScriptedServer(turns("ls", "cat calc.py", "cat test_calc.py")) as server:
        result = anchored(server, repo, tmp_path / "out", stage1_limits=Limits(steps=2))
        assert server.pending == 1
    assert result.anchor_status == "stage1_limits"
    assert result.stage1[0].exit_status == "LimitsExceeded"
    assert len(result.stage1) == 1
    assert result.stage2 is None


def test_a_stage1_cost_limit_is_recorded_as_a_limit(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    model = ModelConfig(
        model="openai/scripted", api_base="", max_retries=0, timeout=5, price_per_million=(1000.0, 1000.0)
    )
    with ScriptedServer(turns("ls", "ls", "ls")) as server, LocalCheckout(repo) as env:
        model = model.model_copy(update={"api_base": server.base_url})
        result = run_anchored(MiniSweAgent(), ISSUE, env, model, Limits(cost=0.02), tmp_path / "out")
    assert result.anchor_status == "stage1_limits"
    assert result.stage1[0].exit_status == "LimitsExceeded"
    assert result.cost == pytest.approx(0.03)


def test_a_stage1_model_failure_is_an_infrastructure_error(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    with ScriptedServer([Reply(status=500)]) as server:
        result = anchored(server, repo, tmp_path / "out")
    assert result.anchor_status == "stage1_infra"
    assert result.infra_error == "model_server_error"
    assert result.stage2 is None


def test_the_cache_skips_stage1_for_the_same_tree_model_and_prompts(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    cache = InstructionCache(tmp_path / "cache")
    with ScriptedServer([*turns(WRITE, SUBMIT), *turns(FIX_SED, SUBMIT)]) as server:
        first = anchored(server, repo, tmp_path / "one", cache=cache)
    with ScriptedServer(turns("cat INSTRUCTION.md", FIX_SED, SUBMIT)) as server:
        second = anchored(server, repo, tmp_path / "two", cache=cache)
        assert len(server.requests) == 3  # stage 2 only
        assert INSTRUCTION.strip() in user_messages(server)[0]
    assert first.anchor_status == "ok"
    assert second.anchor_status == "cached"
    assert second.stage1 == []
    assert "INSTRUCTION.md" not in second.patch
    assert patch_passes_tests(repo, second.patch, tmp_path / "g2")
    # A different tree misses the cache.
    (repo / "calc.py").write_text((repo / "calc.py").read_text() + "\n# touched\n")
    subprocess.run(["git", "-C", str(repo), "commit", "-qam", "touch"], check=True, capture_output=True)
    with ScriptedServer([*turns(WRITE, SUBMIT), *turns(SUBMIT)]) as server:
        third = anchored(server, repo, tmp_path / "three", cache=cache)
    assert third.anchor_status == "ok"


def test_another_task_on_the_same_tree_misses_the_cache(tmp_path: Path):
    """Extend's families share one tree: a map written for one task must not be handed to another."""
    repo = make_bug_repo(tmp_path)
    cache = InstructionCache(tmp_path / "cache")
    model = ModelConfig(model="openai/scripted", max_retries=0, timeout=5)
    with ScriptedServer([*turns(WRITE, SUBMIT), *turns(SUBMIT)]) as server, LocalCheckout(repo) as env:
        model = model.model_copy(update={"api_base": server.base_url})
        first = run_anchored(MiniSweAgent(), ISSUE, env, model, Limits(), tmp_path / "one", cache=cache)
    with ScriptedServer([*turns(WRITE, SUBMIT), *turns(SUBMIT)]) as server, LocalCheckout(repo) as env:
        model = model.model_copy(update={"api_base": server.base_url})
        other = run_anchored(
            MiniSweAgent(), ISSUE + " (another task)", env, model, Limits(), tmp_path / "two", cache=cache
        )
        assert len(server.requests) == 3  # stage 1 ran again: two turns, then stage 2's one
    assert (first.anchor_status, other.anchor_status) == ("ok", "ok")
    assert len(list((tmp_path / "cache").glob("*.md"))) == 2
