"""The model relay with real sockets: streaming passthrough, key replacement, failure observation, and its gate
(the run's token, the chat endpoint, the run's model, the body cap)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from repoanchor.scaffolds.models.relay import SOCKET_USER, ModelRelay
from repoanchor.scaffolds.models.relay_handler import classify
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer

BODY = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": "hi"}]})


@pytest.fixture
def api_key(monkeypatch) -> str:
    key = f"sk-relay-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return key


def post(
    relay: ModelRelay, headers: dict[str, str] | None = None, body: str = BODY, path: str = "/chat/completions"
) -> tuple[int, bytes]:
    """POST with the relay's token (unless `headers` give an Authorization of their own)."""
    connection = http.client.HTTPConnection("127.0.0.1", relay.port, timeout=10)
    try:
        sent = {"Authorization": f"Bearer {relay.token}", **(headers or {})}
        connection.request("POST", f"{relay.prefix}{path}", body, sent)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SlowStream:
    """An upstream that sends one SSE chunk, then waits for `release` before sending the rest (chunked)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        stream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for index, data in enumerate((b"data: one\n\n", b"data: two\n\n", b"data: [DONE]\n\n")):
                    if index == 1:
                        stream.release.wait(10)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.write(b"0\r\n\r\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def test_server_sent_events_pass_through_chunk_by_chunk(api_key):
    upstream = SlowStream()
    try:
        with ModelRelay(upstream.base_url) as relay:
            connection = http.client.HTTPConnection("127.0.0.1", relay.port, timeout=10)
            connection.request("POST", "/v1/chat/completions", BODY, {"Authorization": f"Bearer {relay.token}"})
            response = connection.getresponse()
            # The upstream holds the rest back until the first event has come through the relay.
            first = response.readline() + response.readline()
            released_before_first = upstream.release.is_set()
            upstream.release.set()
            rest = response.read()
            connection.close()
            assert relay.calls[-1].status == 200
    finally:
        upstream.close()
    assert not released_before_first, "the relay buffered the stream instead of passing the first event on"
    assert first == b"data: one\n\n"
    assert rest == b"data: two\n\ndata: [DONE]\n\n"
    assert response.getheader("Content-Type") == "text/event-stream"


def test_the_runs_token_is_replaced_by_the_hosts_key(api_key):
    with ScriptedServer(["hello"]) as server, ModelRelay(server.base_url) as relay:
        status, body = post(relay, {"X-Api-Key": relay.token})
        assert status == 200
        assert json.loads(body)["choices"][0]["message"]["content"] == "hello"
        headers = server.requests[0].headers
    assert headers["authorization"] == f"Bearer {api_key}"
    assert "x-api-key" not in headers
    assert server.requests[0].path == "/v1/chat/completions"
    assert api_key not in repr(relay.calls) + repr(vars(relay))  # observed calls never carry headers


def test_no_key_in_the_environment_sends_no_authorization(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer(["hello"]) as server, ModelRelay(server.base_url) as relay:
        assert post(relay)[0] == 200
    assert "authorization" not in server.requests[0].headers


def test_failures_are_observed_classified_and_reset_by_a_success(api_key):
    replies = [Reply(status=500), Reply(status=503), Reply("fine"), Reply(status=429), Reply(status=400), Reply("x")]
    with ScriptedServer(replies) as server, ModelRelay(server.base_url) as relay:
        statuses = []
        # A 400 refuses the request itself: the agent's ending (see model_ending), no failure of the server.
        for expected_failures in (1, 2, 0, 1, 1):
            statuses.append(post(relay)[0])
            assert relay.consecutive_failures == expected_failures
        assert statuses == [500, 503, 200, 429, 400]  # the scaffold sees the upstream's own answer
        assert [call.error for call in relay.calls] == [
            "model_server_error",
            "model_server_error",
            None,
            "model_server_error",
            None,
        ]
        assert [call.ending for call in relay.calls] == [None, None, None, None, "ModelRequestRejected"]
        assert relay.ending[0] == "ModelRequestRejected"
        assert relay.failures == 3
        assert relay.last_error.kind == "model_server_error"
        assert "HTTP 429" in relay.last_error.message
        assert api_key not in relay.last_error.message
        # The run has ended: a later call (OpenCode compacting its context) is refused, never forwarded.
        status, body = post(relay)
        assert status == 400
        assert "the run already ended (ModelRequestRejected" in json.loads(body)["error"]["message"]
        assert len(server.requests) == 5
        assert [refusal.status for refusal in relay.refusals] == [400]


def test_a_server_that_is_down_is_unreachable():
    with ModelRelay(f"http://127.0.0.1:{free_port()}/v1") as relay:
        status, body = post(relay)
        assert status == 502
        assert json.loads(body)["error"]["type"] == "model_unreachable"
        assert relay.last_error.kind == "model_unreachable"
        assert relay.consecutive_failures == 1


def test_a_server_that_hangs_times_out():
    with ScriptedServer([Reply("late", delay=5)]) as server, ModelRelay(server.base_url, timeout=0.5) as relay:
        started = time.monotonic()
        status, _ = post(relay)
        assert time.monotonic() - started < 4.5  # before the server's reply at 5 s (the kind below proves it)
        assert status == 502
        assert relay.last_error.kind == "model_timeout"
        assert "0.5 s" in relay.last_error.message


def test_the_unix_socket_serves_the_same_relay(api_key, tmp_path: Path):
    path = tmp_path / "relay.sock"
    with ScriptedServer(["over the socket"]) as server, ModelRelay(server.base_url, unix_socket=path) as relay:
        # For the container's agent user alone where we may give the socket away; else the token guards it.
        if os.geteuid() == 0:
            assert (path.stat().st_uid, path.stat().st_mode & 0o777) == (SOCKET_USER, 0o600)
        else:
            assert path.stat().st_mode & 0o777 in (0o600, 0o666)
        with pytest.raises(ValueError, match="unix socket only"):
            _ = relay.port  # no TCP listener beside the socket
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(path))
            request = (
                f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                f"Authorization: Bearer {relay.token}\r\nContent-Length: {len(BODY)}\r\n\r\n{BODY}"
            )
            sock.sendall(request.encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200")
        assert b"over the socket" in answer
        assert server.requests[0].headers["authorization"] == f"Bearer {api_key}"
        assert len(relay.calls) == 1
    assert not path.exists()


def test_status_classes():
    assert classify(200) is None
    assert classify(404) == "model_bad_request"
    assert classify(429) == "model_server_error"
    assert classify(502) == "model_server_error"


def request(relay: ModelRelay, method: str, path: str, body: bytes = b"", headers: dict | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", relay.port, timeout=10)
    try:
        connection.putrequest(method, path)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        if body:
            connection.send(body)
        return connection.getresponse().status
    except (BrokenPipeError, ConnectionResetError):  # refused before the body was all sent
        return -1
    finally:
        connection.close()


def test_the_gate_refuses_every_other_key_endpoint_model_and_oversized_body(api_key):
    """What an agent might try through the scaffold's connection: the old constant key, another model, another
    endpoint, a 50 MB body. Each is refused and kept; none reaches the upstream, nor does the key leave."""
    with ScriptedServer(["hello"] * 3) as server, ModelRelay(server.base_url, model="scripted") as relay:
        token = {"Authorization": f"Bearer {relay.token}"}
        pricey = json.dumps({"model": "gpt-pricey", "messages": []})
        assert post(relay, {"Authorization": "Bearer repoanchor-relay"})[0] == 401
        assert post(relay, {"Authorization": "Bearer "})[0] == 401
        assert post(relay, body=pricey)[0] == 403
        assert post(relay, path="/embeddings")[0] == 404
        assert request(relay, "GET", "/v1/models", headers=token) == 404  # not asked for
        assert request(relay, "DELETE", "/v1/chat/completions", headers=token) == 404
        huge = {**token, "Content-Length": str(50 * 1024 * 1024)}
        assert request(relay, "POST", "/v1/chat/completions", b"{" * 65536, huge) in (413, -1)
        assert post(relay, body="not json")[0] == 400
        assert post(relay)[0] == 200  # the run's own request still passes
        refusals = relay.refusals
    assert [r.status for r in refusals] == [401, 401, 403, 404, 404, 404, 413, 400]
    assert "gpt-pricey" in refusals[2].reason
    assert len(server.requests) == 1  # only the allowed one reached the upstream
    assert api_key not in repr(refusals)


def test_a_chunked_body_over_the_cap_is_refused_without_reading_it_all(api_key):
    with ScriptedServer(["hello"]) as server, ModelRelay(server.base_url, max_body=1024) as relay:
        chunk = b"x" * 700
        body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(4)) + b"0\r\n\r\n"
        headers = {"Authorization": f"Bearer {relay.token}", "Transfer-Encoding": "chunked"}
        assert request(relay, "POST", "/v1/chat/completions", body, headers) in (413, -1)
        assert [r.status for r in relay.refusals] == [413]
    assert server.requests == []
