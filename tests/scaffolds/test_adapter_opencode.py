"""The OpenCode adapter end to end: the real pinned OpenCode binary, its real `@ai-sdk/openai-compatible` client
through the real model relay to the scripted server on 127.0.0.1, and our real environments. Nothing of the
project is mocked. Each OpenCode run takes about 5-10 s (startup, one step per scripted reply, the export)."""

from __future__ import annotations

import json
import re
import shlex
import socket
import time
import uuid
from pathlib import Path

import pytest

from repoanchor import prompts
from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.environments.registry import EnvironmentConfig, open_environment
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer
from repoanchor.scaffolds.opencode.adapter import EVENTS_FILE, EXPORT_FILE, STDERR_FILE, OpenCode
from repoanchor.scaffolds.opencode.setup import find_opencode
from repoanchor.scaffolds.records import InfraError, Limits, RunRecord
from repoanchor.scaffolds.registry import SCAFFOLDS
from repoanchor.scaffolds.trajectories import trajectory
from tests.support.bug_repo import ISSUE, make_bug_repo, patch_passes_tests
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401

try:
    find_opencode()
except InfraError as missing:  # pragma: no cover - the Makefile installs it
    pytest.skip(f"OPENCODE NOT INSTALLED: {missing.message}", allow_module_level=True)

FAST = 30
"""Seconds a run may go on after its first model call when the model server fails (OpenCode alone retries for
~75 s); for an unreachable server, with no call to time from, the whole run: OpenCode's startup takes 2-9 s."""
PRICE = (1000.0, 1000.0)
"""USD per million tokens: each scripted reply (10 + 5 tokens) costs 0.015."""


@pytest.fixture
def api_key(monkeypatch) -> str:
    key = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return key


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_bug_repo(tmp_path)


def call(index: int, tool: str, **arguments) -> dict:
    return {"id": f"call_{index}", "type": "function", "function": {"name": tool, "arguments": json.dumps(arguments)}}


def bash(index: int, command: str) -> Reply:
    return Reply(f"Step {index}.", [call(index, "bash", command=command, description=f"step {index}")])


def secret_probe(key: str) -> str:
    """A command printing the environment and grepping OpenCode's home for the key, without containing it."""
    half = len(key) // 2
    return f'env; grep -rlF "$(printf %s {key[:half]} {key[half:]})" "$HOME"; echo "grep-exit=$?"'


RELAY_PROBE = r"""
import http.client, json, os, urllib.parse
options = json.loads(os.environ["OPENCODE_CONFIG_CONTENT"])["provider"]["repoanchor"]["options"]
base, token = urllib.parse.urlsplit(options["baseURL"]), options["apiKey"]
def hit(path, key, model="scripted", length=None):
    body = json.dumps({"model": model, "messages": []})
    connection = http.client.HTTPConnection(base.hostname, base.port, timeout=10)
    headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
    if length:
        headers["Content-Length"] = str(length)
    try:
        connection.request("POST", base.path + path, body, headers)
        return connection.getresponse().status
    except OSError as error:
        return type(error).__name__
print("relay-probe", hit("/chat/completions", "repoanchor-relay"), hit("/chat/completions", token, "gpt-pricey"),
      hit("/embeddings", token), hit("/chat/completions", token, length=50 * 1024 * 1024))
"""
"""What an agent might try with the relay its scaffold talks to: the old constant key, a pricier model, another
endpoint, a 50 MB body."""


def fixing_replies(workdir: str, key: str) -> list[Reply]:
    calc = f"{workdir}/calc.py"
    probe = f"{secret_probe(key)}; python3 -c {shlex.quote(RELAY_PROBE)}"
    return [
        Reply("Reading the code.", [call(1, "read", filePath=calc)]),
        Reply("", [call(2, "edit", filePath=calc, oldString="return a - b", newString="return a + b")]),
        Reply("", [call(3, "bash", command=probe, description="look around")]),
        Reply("", [call(4, "grep", pattern="def add")]),  # needs rg on PATH (else OpenCode tries to download it)
        Reply("Fixed: add() returns the sum."),
    ]


def run(env, server_url: str, out: Path, limits: Limits | None = None, **model) -> RunRecord:
    config = ModelConfig(model="openai/scripted", api_base=server_url, **model)
    prompt = prompts.render("task", task=ISSUE, hints="", workdir=env.workdir)
    return OpenCode().run(prompt, env, config, limits or Limits(), out)


def events(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / EVENTS_FILE).read_text().splitlines()]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_registry_names_the_adapter():
    assert SCAFFOLDS["opencode"] is OpenCode
    assert OpenCode.name == "opencode"


@pytest.fixture(params=["local", "docker"])
def kind(request) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_engine")  # skips loudly without an engine
    return request.param


def test_fixes_the_bug_end_to_end_without_exposing_the_key(api_key, repo, tmp_path, kind, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-never-passed-0123456789")
    out = tmp_path / "out"
    mounts = OpenCode.mounts() if kind == "docker" else None
    with open_environment(EnvironmentConfig(kind=kind), repo, mounts=mounts) as env:
        with ScriptedServer(fixing_replies(env.workdir, api_key)) as server:
            record = run(env, server.base_url, out, price_per_million=PRICE)
    assert record.exit_status == "Finished", record
    assert record.infra_error is None
    assert patch_passes_tests(repo, record.patch, tmp_path)
    assert (record.steps, record.input_tokens, record.output_tokens) == (5, 50, 25)
    assert record.cost == pytest.approx(5 * 0.015)
    assert record.raw == [EVENTS_FILE, EXPORT_FILE, STDERR_FILE]
    assert json.loads((out / EXPORT_FILE).read_text())["info"]["id"] == events(out)[0]["sessionID"]
    assert RunRecord.model_validate_json((out / "run.json").read_text()) == record

    saved = trajectory.load(out / record.trajectory)
    assert saved.source_format == "opencode-export"
    assert [action.tool for action in saved.actions] == ["read", "edit", "bash", "grep"]
    assert saved.actions[3].output_excerpt.startswith("Found 1 matches")
    assert saved.exit_status == "Finished"

    # What the agent was told: the task, through the relay, which swapped OpenCode's dummy key for the real one.
    assert len(server.requests) == 5
    assert ISSUE in server.requests[0].body["messages"][-1]["content"]
    assert {request.headers["authorization"] for request in server.requests} == {f"Bearer {api_key}"}
    assert server.requests[0].body["model"] == "scripted"  # the openai/ routing prefix is not sent

    # The key is nowhere the agent can look: not in its environment (OpenCode has only the dummy), not in
    # OpenCode's home, not in any file of the run; and that home is gone afterwards.
    shown = saved.actions[2].output_excerpt
    assert "grep-exit=1" in shown
    token = re.search(r'"apiKey": "([^"]+)"', shown).group(1)  # OpenCode holds the relay's token, not a key
    assert len(token) >= 32
    assert "relay-probe 401 403 404 413" in shown
    assert [refusal["status"] for refusal in record.relay_refusals] == [401, 403, 404, 413]
    assert "OPENCODE_DISABLE_MODELS_FETCH=1" in shown
    assert api_key not in shown
    assert "MY_SERVICE_TOKEN" not in shown
    assert not [path for path in out.rglob("*") if api_key in path.read_text(errors="replace")]
    home = re.search(r"^HOME=(.*)$", shown, re.MULTILINE).group(1)
    assert kind == "docker" or not Path(home).exists()


def test_step_limit_and_the_command_timeout(api_key, repo, tmp_path):
    out = tmp_path / "out"
    replies = [bash(0, "echo before; sleep 6; echo too-late"), *(bash(i, f"echo {i}") for i in range(1, 6))]
    with LocalCheckout(repo) as env, ScriptedServer(replies) as server:
        record = run(env, server.base_url, out, Limits(steps=2, command_timeout=1.5))
    assert record.exit_status == "LimitsExceeded"
    assert record.steps == 2
    assert record.cost is None  # no price configured: unknown, not the 0 OpenCode computes
    assert sum(event["type"] == "step_finish" for event in events(out)) == 2
    assert "step limit 2 reached" in (out / STDERR_FILE).read_text()
    saved = trajectory.load(out / record.trajectory)
    assert saved.exit_status == "LimitsExceeded"
    # OpenCode's bash tool enforces Limits.command_timeout and tells the agent.
    assert "exceeding timeout 1500 ms" in saved.actions[0].output_excerpt
    assert "too-late" not in saved.actions[0].output_excerpt


def test_cost_limit(api_key, repo, tmp_path):
    out = tmp_path / "out"
    with LocalCheckout(repo) as env, ScriptedServer([bash(i, f"echo {i}") for i in range(6)]) as server:
        record = run(env, server.base_url, out, Limits(cost=0.025), price_per_million=PRICE)
    assert record.exit_status == "LimitsExceeded"
    assert record.steps == 2
    assert record.cost == pytest.approx(0.03)
    assert "cost limit 0.025 USD reached" in (out / STDERR_FILE).read_text()


def test_wall_time_limit_stops_opencode_and_its_commands(api_key, repo, tmp_path, kind):
    mounts = OpenCode.mounts() if kind == "docker" else None

    def attempt(limit: int, out: Path):
        # A duration unique to this attempt: a parallel run's sleeps are visible in the host's /proc too.
        duration = f"301.{uuid.uuid4().int % 10**6:06d}"
        command = f"touch started; sleep {duration} & setsid sleep {duration} & sleep {duration}; echo late"
        with open_environment(EnvironmentConfig(kind=kind), repo, mounts=mounts) as env:
            with ScriptedServer([bash(0, command)]) as server:
                started = time.monotonic()
                record = run(env, server.base_url, out, Limits(wall_seconds=limit))
                ended = time.monotonic()
            # `301[.]NNNNNN` matches the sleeps' command lines but not grep's own.
            pattern = duration.replace(".", "[.]")
            # -s: a process that ends between the glob and grep's read is no error (its file is gone).
            left = env.execute(f"grep -ls '{pattern}' /proc/[0-9]*/cmdline", timeout=10).output
        return record, ended - started, left

    # The command must have started before the limit, and OpenCode alone takes 2-9 s to reach its first model
    # call on a loaded 2-core machine (more under heavier load): a longer limit is tried only if it had not.
    for limit in (25, 60, 150):
        out = tmp_path / f"out-{limit}"
        record, elapsed, left = attempt(limit, out)
        if "started" in record.patch:
            break
    assert "started" in record.patch, "OpenCode never ran the command within 150 s"
    assert elapsed < limit + 25  # the limit, then the cleanup, on a loaded machine; the sleeps last 301 s
    assert record.exit_status == "LimitsExceeded"
    assert f"wall time limit {limit} s reached" in (out / STDERR_FILE).read_text()
    assert "cmdline" not in left, f"processes left running: {left}"


def test_server_errors_end_the_run_fast_as_an_infrastructure_error(api_key, repo, tmp_path, kind):
    mounts = OpenCode.mounts() if kind == "docker" else None
    with open_environment(EnvironmentConfig(kind=kind), repo, mounts=mounts) as env:
        with ScriptedServer([Reply(status=500)] * 8) as server:
            record = run(env, server.base_url, tmp_path / "out")
    assert time.monotonic() - server.requests[0].received < FAST  # OpenCode alone would retry for ~75 s
    assert (record.exit_status, record.infra_error) == (None, "model_server_error")
    assert "answered HTTP 500" in record.infra_message
    assert len(server.requests) == 2  # stopped after the relay saw two failures in a row, not OpenCode's seven


def test_a_hanging_server_times_out(api_key, repo, tmp_path):
    with LocalCheckout(repo) as env, ScriptedServer([Reply("late", delay=30)] * 3) as server:
        record = run(env, server.base_url, tmp_path / "out", timeout=1.5)
    assert time.monotonic() - server.requests[0].received < FAST
    assert (record.exit_status, record.infra_error) == (None, "model_timeout")
    assert "no answer within 1.5 s" in record.infra_message
    assert len(server.requests) == 2


def test_a_server_that_is_down_is_unreachable(api_key, repo, tmp_path):
    started = time.monotonic()
    with LocalCheckout(repo) as env:
        record = run(env, f"http://127.0.0.1:{free_port()}/v1", tmp_path / "out")
    assert time.monotonic() - started < FAST
    assert (record.exit_status, record.infra_error) == (None, "model_unreachable")
    assert "Connection refused" in record.infra_message


def test_opencode_failing_by_itself_is_an_infrastructure_error(api_key, repo, tmp_path, monkeypatch):
    monkeypatch.setenv("REPOANCHOR_OPENCODE", "/bin/false")
    with LocalCheckout(repo) as env:
        record = run(env, "http://127.0.0.1:9/v1", tmp_path / "out")
    assert (record.exit_status, record.infra_error) == (None, "opencode_failed")
    assert record.infra_message == "OpenCode exited 1: no output on stderr"


def test_a_missing_binary_is_an_infrastructure_error(api_key, repo, tmp_path, monkeypatch):
    monkeypatch.setenv("REPOANCHOR_OPENCODE", "/nonexistent/opencode")
    out = tmp_path / "out"
    with LocalCheckout(repo) as env:
        record = run(env, "http://127.0.0.1:9/v1", out)
    assert (record.exit_status, record.infra_error) == (None, "missing_binary")
    assert "REPOANCHOR_OPENCODE=/nonexistent/opencode" in record.infra_message
    assert record.trajectory is None
    assert (out / "run.json").is_file()


def test_docker_without_the_mounts_says_what_is_missing(api_key, repo, tmp_path, docker_engine):
    with open_environment(EnvironmentConfig(kind="docker"), repo) as env:
        record = run(env, "http://127.0.0.1:9/v1", tmp_path / "out")
    assert record.infra_error == "environment_setup"
    assert "mounts=OpenCode.mounts()" in record.infra_message


def test_a_context_window_overflow_ends_the_run_at_once_as_the_agents_with_its_patch(api_key, repo, tmp_path):
    # Not retried (OpenCode reports it as an `error` event straight away) and not an infrastructure error.
    overflow = {"error": {"message": "This model's maximum context length is 8192 tokens.",
                          "type": "invalid_request_error", "code": "context_length_exceeded"}}  # fmt: skip
    with LocalCheckout(repo) as env:
        calc = f"{env.workdir}/calc.py"
        edit = Reply("", [call(1, "edit", filePath=calc, oldString="return a - b", newString="return a + b")])
        with ScriptedServer([edit, *[Reply(status=400, body=overflow)] * 8]) as server:
            record = run(env, server.base_url, tmp_path / "out")
    assert (record.exit_status, record.infra_error) == ("ContextWindowExceeded", None)
    assert "maximum context length" in record.exit_message
    assert "+    return a + b" in record.patch
    assert time.monotonic() - server.requests[1].received < FAST
    assert len(server.requests) == 2  # ended at the first refusal, not after OpenCode's seven retries
    assert any(event["type"] == "error" for event in events(tmp_path / "out"))
