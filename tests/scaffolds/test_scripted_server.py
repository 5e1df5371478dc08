"""The scripted OpenAI-compatible server: plain HTTP contract, then litellm's real client against it."""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
import urllib.error
import urllib.request

import pytest

from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer

CALL = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}


def _post(url: str, body: dict, headers: dict | None = None) -> tuple[int, bytes]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/chat/completions"])
def test_answers_in_order_and_records_every_request(path: str):
    with ScriptedServer(["first", Reply("second")]) as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.port > 0
        bodies = [{"model": "m", "messages": [{"role": "user", "content": str(i)}]} for i in range(3)]
        answers = [_post(server.url + path, b, {"Authorization": "Bearer k"}) for b in bodies]
        assert [json.loads(a[1])["choices"][0]["message"]["content"] for a in answers[:2]] == ["first", "second"]
        assert answers[2][0] == 500
        assert "no reply left" in json.loads(answers[2][1])["error"]["message"]
        assert [r.body for r in server.requests] == bodies
        assert server.requests[0].path == path
        assert server.requests[0].headers["authorization"] == "Bearer k"
        assert server.pending == 0


def test_tool_calls_errors_and_raw_bodies():
    replies = [Reply(None, tool_calls=[CALL]), Reply(status=429), Reply(body={"anything": 1}, status=200)]
    with ScriptedServer(replies, model="m1") as server:
        status, data = _post(server.base_url + "/chat/completions", {"messages": []})
        choice = json.loads(data)["choices"][0]
        assert (status, choice["finish_reason"], choice["message"]["tool_calls"]) == (200, "tool_calls", [CALL])
        assert json.loads(data)["model"] == "m1"
        assert _post(server.base_url + "/chat/completions", {})[0] == 429
        assert json.loads(_post(server.base_url + "/chat/completions", {})[1]) == {"anything": 1}
        assert _post(server.url + "/v1/embeddings", {})[0] == 404
        with urllib.request.urlopen(server.base_url + "/models", timeout=10) as response:
            assert json.loads(response.read())["data"][0]["id"] == "m1"


def test_streams_server_sent_events_when_asked():
    with ScriptedServer([Reply("hello", tool_calls=[CALL])]) as server:
        status, data = _post(server.base_url + "/chat/completions", {"stream": True, "messages": []})
    events = [line[6:] for line in data.decode().splitlines() if line.startswith("data: ")]
    assert status == 200
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("content") or "" for d in deltas) == "hello"
    assert [d["tool_calls"][0]["function"]["name"] for d in deltas if "tool_calls" in d] == ["bash"]
    assert chunks[-1]["usage"]["total_tokens"] == 15


def test_serves_concurrent_requests_and_frees_its_port():
    with ScriptedServer([Reply("slow", delay=3), Reply("fast")]) as server:
        results, finished = {}, []

        def call(name: str) -> None:
            results[name] = _post(server.base_url + "/chat/completions", {"n": name})[0]
            finished.append(name)

        threads = [threading.Thread(target=call, args=(n,)) for n in ("a", "b")]
        threads[0].start()
        while not server.requests:  # the slow request is being served (it is recorded on arrival)
            time.sleep(0.01)
        threads[1].start()
        for t in threads:
            t.join()
        assert finished == ["b", "a"]  # the second did not queue behind the first's 3 s delay
        assert results == {"a": 200, "b": 200}
        port = server.port
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)


def test_litellm_real_client_plain_and_streaming(monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not reach the internet
    import litellm

    with ScriptedServer(["plain answer", "streamed answer"]) as server:
        kwargs = {"model": "openai/scripted", "api_base": server.base_url, "api_key": "dummy", "num_retries": 0}
        messages = [{"role": "user", "content": "hi"}]
        response = litellm.completion(messages=messages, **kwargs)
        assert response.choices[0].message.content == "plain answer"
        stream = litellm.completion(messages=messages, stream=True, **kwargs)
        assert "".join(chunk.choices[0].delta.content or "" for chunk in stream) == "streamed answer"
        assert [r.body["model"] for r in server.requests] == ["scripted", "scripted"]
        assert server.requests[1].body["stream"] is True
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_a_client_that_goes_away_before_its_reply_is_counted_and_the_server_goes_on():
    """OpenCode stopped at a limit closes its connection mid-call: the reply has no one to go to."""
    with ScriptedServer([Reply("late", delay=0.3), "next"]) as server:
        body = json.dumps({"model": "m", "stream": True, "messages": []}).encode()
        client = socket.create_connection(("127.0.0.1", server.port))
        client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)  # fmt: skip
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        client.close()
        deadline = time.monotonic() + 10
        while server.dropped == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.dropped == 1
        status, answer = _post(server.url + "/v1/chat/completions", {"model": "m", "messages": []})
        assert (status, json.loads(answer)["choices"][0]["message"]["content"]) == (200, "next")


def test_a_responder_computes_each_reply_from_the_request():
    def echo_turns(body: dict) -> Reply:
        turns = sum(1 for message in body["messages"] if message["role"] == "assistant")
        if turns > 1:
            raise RuntimeError("policy has no third turn")
        return Reply(f"turn {turns}: {body['messages'][-1]['content']}")

    history = [{"role": "user", "content": "hi"}]
    with ScriptedServer(responder=echo_turns) as server:
        url = server.base_url + "/chat/completions"
        first = json.loads(_post(url, {"messages": history})[1])["choices"][0]["message"]["content"]
        history += [{"role": "assistant", "content": first}, {"role": "user", "content": "again"}]
        second = json.loads(_post(url, {"messages": history})[1])["choices"][0]["message"]["content"]
        history += [{"role": "assistant", "content": second}, {"role": "user", "content": "more"}]
        status, data = _post(url, {"messages": history})
    assert (first, second) == ("turn 0: hi", "turn 1: again")
    assert status == 500
    assert "responder failed" in json.loads(data)["error"]["message"]
    assert len(server.requests) == 3


def test_litellm_responses_api_gets_output_items_and_function_calls(monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    with ScriptedServer(
        [Reply("looking", tool_calls=[CALL], usage={"prompt_tokens": 7, "completion_tokens": 3})]
    ) as server:
        response = litellm.responses(
            model="openai/scripted",
            api_base=server.base_url,
            api_key="dummy",
            input=[{"role": "user", "content": "hi"}],
        )
        assert [request.path for request in server.requests] == ["/v1/responses"]
    message, function_call = response.output
    assert message.content[0].text == "looking"
    assert (function_call.type, function_call.call_id, function_call.name) == ("function_call", "call_1", "bash")
    assert json.loads(function_call.arguments) == {"command": "ls"}
    assert (response.usage.input_tokens, response.usage.output_tokens) == (7, 3)
