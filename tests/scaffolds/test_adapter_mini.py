"""The mini-swe-agent adapter end to end: mini's real DefaultAgent and LitellmModel, litellm's real HTTP client
against the scripted server on 127.0.0.1, and our real environments. Nothing of the project is mocked."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from repoanchor import prompts
from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.environments.registry import EnvironmentConfig, open_environment
from repoanchor.scaffolds.mini.adapter import MiniSweAgent, private_folder
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer
from repoanchor.scaffolds.records import Limits, RunRecord
from repoanchor.scaffolds.registry import SCAFFOLDS
from repoanchor.scaffolds.trajectories import trajectory
from tests.support import bug_repo
from tests.support.bug_repo import CHECK, FIX_SED, ISSUE, make_bug_repo
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.scripted import SUBMIT, turns

FAST = {"max_retries": 0, "timeout": 2}


@pytest.fixture
def api_key(monkeypatch) -> str:
    key = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)  # litellm's openai/ route needs one; it must reach the server only
    return key


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_bug_repo(tmp_path)


def run_mini(env, api_base: str, out: Path, limits: Limits | None = None, **model) -> RunRecord:
    config = ModelConfig(model="openai/scripted", api_base=api_base, **model)
    # The caller renders the user message, as a plain baseline run does; the adapter passes it on verbatim.
    prompt = prompts.render("task", task=ISSUE, hints="", workdir=env.workdir)
    return MiniSweAgent().run(prompt, env, config, limits or Limits(), out)


def git_out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(params=["local", "docker"])
def kind(request) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_engine")  # skips loudly without an engine
    return request.param


def test_registry_names_the_adapter():
    assert SCAFFOLDS["mini-swe-agent"] is MiniSweAgent
    assert MiniSweAgent.name == "mini-swe-agent"


def test_fixes_the_bug_end_to_end_and_records_everything(api_key, repo, tmp_path, kind):
    out = tmp_path / "out"
    commands = ["cat calc.py", FIX_SED, CHECK, SUBMIT]
    with ScriptedServer(turns(*commands)) as server, open_environment(EnvironmentConfig(kind=kind), repo) as env:
        record = run_mini(env, server.base_url, out)
    assert (record.exit_status, record.infra_error, record.environment) == ("Submitted", None, kind)
    assert (record.steps, record.input_tokens, record.output_tokens) == (4, 40, 20)
    assert record.cost is None  # the scripted model has no price anywhere: unknown, not 0
    assert RunRecord.model_validate_json((out / "run.json").read_text()) == record
    assert (record.trajectory, record.raw) == ("trajectory.json", ["mini.traj.json"])
    raw = json.loads((out / "mini.traj.json").read_text())
    assert raw["info"]["exit_status"] == "Submitted"
    assert "api_key" not in json.dumps(raw["info"]["config"]["model"])
    normal = trajectory.load(out / "trajectory.json")
    assert [action.command for action in normal.actions] == commands
    assert [action.exit_code for action in normal.actions] == [0, 0, 0, None]  # mini adds no output for submit
    assert "return a - b" in normal.actions[0].output_excerpt
    assert normal.actions[2].output_excerpt.strip() == "ok"
    assert bug_repo.patch_passes_tests(repo, record.patch, tmp_path)
    assert "return a - b" in (repo / "calc.py").read_text()  # the original repository is untouched
    assert git_out(repo, "status", "--porcelain") == ""
    # What the agent was told: our prompts with the issue, and mini's single bash tool.
    first = server.requests[0].body
    assert [message["role"] for message in first["messages"]] == ["system", "user"]
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in first["messages"][0]["content"]
    assert ISSUE in first["messages"][1]["content"]
    assert env.workdir in first["messages"][1]["content"]
    assert [tool["function"]["name"] for tool in first["tools"]] == ["bash"]
    assert first["temperature"] == 0.0


def test_the_task_reaches_the_model_verbatim_braces_included(api_key, repo, tmp_path):
    task = "Fix {{ add }} and {% raw %} in {x}\n"
    with ScriptedServer(turns(SUBMIT)) as server, LocalCheckout(repo) as env:
        config = ModelConfig(model="openai/scripted", api_base=server.base_url)
        MiniSweAgent().run(task, env, config, Limits(), tmp_path)
    assert server.requests[0].body["messages"][1]["content"] == task


def test_step_limit(api_key, repo, tmp_path):
    with ScriptedServer(turns("ls", "ls", "ls", "ls")) as server, LocalCheckout(repo) as env:
        record = run_mini(env, server.base_url, tmp_path, Limits(steps=2))
    assert (record.exit_status, record.steps, server.pending) == ("LimitsExceeded", 2, 2)
    assert record.infra_error is None


def test_cost_limit_with_a_configured_price(api_key, repo, tmp_path):
    # 10 prompt + 5 completion tokens per scripted call at $1000 per million: $0.015 a call.
    model = f"openai/priced-{uuid.uuid4().hex[:8]}"  # litellm's registry is process-wide: a fresh name
    with ScriptedServer(turns("ls", "ls", "ls", "ls")) as server, LocalCheckout(repo) as env:
        config = ModelConfig(model=model, api_base=server.base_url, price_per_million=(1000.0, 1000.0))
        record = MiniSweAgent().run(ISSUE, env, config, Limits(cost=0.02), tmp_path)
    assert (record.exit_status, record.steps) == ("LimitsExceeded", 2)
    assert record.cost == pytest.approx(0.03)
    assert [turn.cost for turn in trajectory.load(tmp_path / "trajectory.json").turns] == pytest.approx([0.015] * 2)


def test_a_price_configured_for_one_run_does_not_price_the_next(api_key, repo, tmp_path):
    model = f"openai/priced-{uuid.uuid4().hex[:8]}"
    with ScriptedServer(turns("ls", SUBMIT, "ls", SUBMIT)) as server, LocalCheckout(repo) as env:
        priced = ModelConfig(model=model, api_base=server.base_url, price_per_million=(1000.0, 1000.0))
        first = MiniSweAgent().run(ISSUE, env, priced, Limits(), tmp_path / "first")
        second = MiniSweAgent().run(
            ISSUE, env, ModelConfig(model=model, api_base=server.base_url), Limits(), tmp_path / "second"
        )
    assert first.cost == pytest.approx(0.03)
    assert second.cost is None  # unknown price: recorded as unknown, not the earlier run's price


def test_wall_time_limit(api_key, repo, tmp_path):
    # Each reply takes 4 s, so the first step ends past the 3 s limit, and the limit (checked before every model
    # call) stops the run before a second one. mini's clock starts in-process just before its first call, so
    # a loaded machine only makes the step later, not the count different.
    with ScriptedServer(turns("ls", "ls", "ls", delay=4)) as server, LocalCheckout(repo) as env:
        record = run_mini(env, server.base_url, tmp_path, Limits(wall_seconds=3))
    assert record.exit_status in ("LimitsExceeded", "TimeExceeded")
    assert (record.steps, record.infra_error) == (1, None)
    assert record.wall_seconds >= 3  # one step, then stopped by the limit: two replies were never asked for
    assert len(server.requests) == 1


def test_replies_without_a_tool_call_end_in_repeated_format_errors(api_key, repo, tmp_path):
    with ScriptedServer([Reply("I think the bug is in add().")] * 3) as server, LocalCheckout(repo) as env:
        record = run_mini(env, server.base_url, tmp_path)
    assert (record.exit_status, record.steps, record.infra_error) == ("RepeatedFormatError", 3, None)
    assert trajectory.load(tmp_path / "trajectory.json").format_errors == 3


def test_a_patch_the_environment_cannot_take_is_recorded_and_the_ending_kept(api_key, repo, tmp_path):
    # The agent deletes the checkout's repository, so the environment cannot diff: recorded, not raised.
    with ScriptedServer(turns(FIX_SED, "rm -rf .git", SUBMIT)) as server, LocalCheckout(repo) as env:
        record = run_mini(env, server.base_url, tmp_path)
    assert (record.exit_status, record.infra_error, record.patch) == ("Submitted", "environment_patch", "")
    assert "git diff failed" in record.infra_message
    assert not Path(env.workdir).exists()  # and the checkout is still cleaned up
    assert RunRecord.model_validate_json((tmp_path / "run.json").read_text()) == record


def test_a_command_timeout_is_shown_to_the_agent(api_key, repo, tmp_path):
    with ScriptedServer(turns("sleep 30", SUBMIT)) as server, LocalCheckout(repo) as env:
        started = time.monotonic()
        record = run_mini(env, server.base_url, tmp_path, Limits(command_timeout=1))
    # well under the 30 s the command takes unkilled; the rest is margin for a loaded machine
    assert time.monotonic() - started < 25
    assert (record.exit_status, record.infra_error) == ("Submitted", None)
    observation = server.requests[1].body["messages"][-1]
    assert observation["role"] == "tool"
    assert "timed out after 1 seconds" in observation["content"]


@pytest.mark.parametrize(
    ("replies", "model", "kind", "words"),
    [
        ([Reply(status=500)] * 3, FAST, "model_server_error", "500"),
        ([Reply("late", delay=5)], {**FAST, "timeout": 1}, "model_timeout", "Timeout"),
        ([Reply(status=401)], FAST, "model_bad_request", "401"),
    ],
    ids=["server-error", "hang", "unauthorised"],
)
def test_model_failures_are_infrastructure_errors(api_key, repo, tmp_path, replies, model, kind, words):
    with ScriptedServer(replies) as server, LocalCheckout(repo) as env:
        started = time.monotonic()
        record = run_mini(env, server.base_url, tmp_path, **model)
    # One request proves no client retries and the kind proves the 1 s timeout fired (the hang answers
    # at 5 s); the bound only guards against minutes of default retrying, with room for a loaded machine.
    assert time.monotonic() - started < 20
    assert len(server.requests) == 1  # max_retries=0: one attempt, no hidden client retries
    assert (record.infra_error, record.exit_status) == (kind, None)
    assert words in record.infra_message
    assert RunRecord.model_validate_json((tmp_path / "run.json").read_text()).infra_error == kind
    assert trajectory.load(tmp_path / "trajectory.json").actions == []


def test_an_unreachable_server_is_an_infrastructure_error(api_key, repo, tmp_path):
    with LocalCheckout(repo) as env:
        started = time.monotonic()
        record = run_mini(env, f"http://127.0.0.1:{free_port()}/v1", tmp_path, **FAST)
    assert time.monotonic() - started < 20  # the client's default retries back off for minutes; margin for load
    assert (record.infra_error, record.exit_status, record.patch) == ("model_unreachable", None, "")
    assert "Connection" in record.infra_message
    assert (tmp_path / "run.json").is_file()


def test_the_api_key_is_used_but_never_recorded_nor_shown_to_the_agent(api_key, repo, tmp_path):
    out = tmp_path / "out"
    with ScriptedServer(turns("env", "echo key=$OPENAI_API_KEY", SUBMIT)) as server, LocalCheckout(repo) as env:
        record = run_mini(env, server.base_url, out)
        written = [path for root in (out, env.scratch) for path in root.rglob("*") if path.is_file()]
        leaks = [path for path in written if api_key.encode() in path.read_bytes()]
    assert record.exit_status == "Submitted"
    assert all(request.headers["authorization"] == f"Bearer {api_key}" for request in server.requests)
    assert len(written) > 5
    assert leaks == []
    # The agent never saw it: what the model was sent is unredacted, unlike the files.
    assert not any(api_key in json.dumps(request.body) for request in server.requests)
    actions = trajectory.load(out / "trajectory.json").actions
    assert "OPENAI_API_KEY" not in actions[0].output_excerpt
    assert "PATH=" in actions[0].output_excerpt
    assert actions[1].output_excerpt == "key=\n"


OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 131072 tokens.",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
}
POLICY = {
    "error": {
        "message": "The response was filtered due to the prompt triggering the content management policy.",
        "type": "invalid_request_error",
        "code": "content_filter",
    }
}
REJECTED = {"error": {"message": "Invalid 'messages[3].content': string too long.", "type": "invalid_request_error"}}
"""What OpenAI-compatible providers answer (HTTP 400) when a request itself is refused."""


@pytest.mark.parametrize(
    ("body", "ending"),
    [(OVERFLOW, "ContextWindowExceeded"), (POLICY, "ContentPolicyViolation"), (REJECTED, "ModelRequestRejected")],
    ids=["context-window", "content-policy", "other-400"],
)
def test_a_refused_request_is_the_agents_ending_and_its_patch_is_kept(api_key, repo, tmp_path, body, ending):
    replies = [*turns(FIX_SED), Reply(status=400, body=body)]
    with ScriptedServer(replies) as server, LocalCheckout(repo) as env:
        record = run_mini(env, server.base_url, tmp_path, **FAST)
    assert len(server.requests) == 2  # no retry of a request that would be refused again
    assert (record.exit_status, record.infra_error) == (ending, None)
    assert "+    return a + b" in record.patch  # the partial work is graded, as any ending's
    assert "400" in record.exit_message


def _symlinked(folder: Path) -> None:
    (folder.parent / "elsewhere").mkdir()
    folder.symlink_to(folder.parent / "elsewhere")


def _open_to_all(folder: Path) -> None:
    folder.mkdir()
    folder.chmod(0o777)


def _foreign(folder: Path) -> None:
    folder.mkdir(mode=0o700)
    os.chown(folder, 4242, 4242)


@pytest.mark.parametrize(
    ("make", "said"),
    [(_symlinked, "is not a folder"), (_open_to_all, "open to others"), (_foreign, "belongs to uid 4242")],
)
def test_a_config_folder_someone_else_could_have_made_is_refused(make, said, tmp_path):
    """mini-swe-agent loads a .env from its config folder at import: one we did not make ourselves, closed to
    everyone else, could hand it a base URL of someone else's. The run refuses, naming the folder and why."""
    if make is _foreign and os.geteuid() != 0:
        pytest.skip("making a folder of another user needs root")
    folder = tmp_path / f"repoanchor-mswea-{os.getuid()}"
    make(folder)
    # A fresh interpreter: mini reads the folder at its first import, which this process has long done.
    probe = "from repoanchor.scaffolds.mini.adapter import prepare_imports; prepare_imports(0)"
    proc = subprocess.run(
        [sys.executable, "-c", probe], env={**os.environ, "TMPDIR": str(tmp_path)}, capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "refusing mini-swe-agent's config folder" in proc.stderr
    assert str(folder) in proc.stderr
    assert said in proc.stderr


def test_the_config_folder_is_made_private_and_reused(tmp_path):
    folder = private_folder(tmp_path / "config")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert private_folder(folder) == folder  # ours and closed: used again
