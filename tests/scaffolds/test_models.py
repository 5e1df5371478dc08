"""The litellm model wrapper through litellm's real client against the scripted server: replies,
usage, tool calls, classified infrastructure errors, and secrets redacted from every record."""

from __future__ import annotations

import json
import socket

import pytest

from repoanchor.scaffolds.models.model import LitellmModel, ModelConfig, ModelError, redact, secret_values
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer

SECRET = "sk-test-0123456789abcdef"


@pytest.fixture
def secret_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return SECRET


def _model(server: ScriptedServer, **extra) -> LitellmModel:
    return LitellmModel(ModelConfig(model="openai/scripted", api_base=server.base_url, **extra))


def test_reply_usage_and_tool_calls_come_back_and_the_key_only_travels_in_the_header(secret_key):
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    with ScriptedServer([Reply("hello"), Reply(None, tool_calls=[call])]) as server:
        first = _model(server).query([{"role": "user", "content": "hi"}])
        second = _model(server).query(
            [{"role": "user", "content": "run"}],
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": "bash",
                        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
                    },
                }
            ],
        )
    assert first.content == "hello"
    assert (first.input_tokens, first.output_tokens) == (10, 5)
    assert second.tool_calls[0]["function"]["name"] == "bash"
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(server.requests[0].body)
    assert SECRET not in json.dumps([first.__dict__, second.__dict__])


@pytest.mark.parametrize(("reply", "kind"), [(Reply(status=500), "server_error"), (Reply(status=400), "bad_request")])
def test_provider_errors_are_classified_infrastructure_errors(secret_key, reply: Reply, kind: str):
    with ScriptedServer([reply]) as server, pytest.raises(ModelError) as caught:
        _model(server).query([{"role": "user", "content": "hi"}])
    assert caught.value.kind == kind
    assert SECRET not in str(caught.value)


def test_a_hanging_server_is_a_timeout_and_a_closed_port_is_unreachable(secret_key):
    with ScriptedServer([Reply("late", delay=3)]) as server, pytest.raises(ModelError) as caught:
        _model(server, timeout=0.5).query([{"role": "user", "content": "hi"}])
    assert caught.value.kind == "timeout"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = LitellmModel(ModelConfig(model="openai/scripted", api_base=f"http://127.0.0.1:{port}/v1", timeout=5))
    with pytest.raises(ModelError) as down:
        model.query([{"role": "user", "content": "hi"}])
    assert down.value.kind == "unreachable"


def test_redact_removes_every_secret_environment_value_from_nested_records():
    env = {"OPENAI_API_KEY": SECRET, "MY_TOKEN": "tok-abcdefgh", "HOME": "/root", "SHORT_KEY": "abc"}
    assert secret_values(env) == [SECRET, "tok-abcdefgh"]
    record = {"cmd": f"curl -H 'Authorization: {SECRET}'", "nested": [("tok-abcdefgh", 1)], "home": "/root"}
    assert redact(record, secret_values(env)) == {
        "cmd": "curl -H 'Authorization: ***'",
        "nested": [("***", 1)],
        "home": "/root",
    }
