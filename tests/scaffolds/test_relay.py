"""The model relay with real sockets: streaming passthrough, key replacement, failure observation."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from repoanchor.scaffolds.models.relay import ModelRelay, classify
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer

BODY = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": "hi"}]})


@pytest.fixture
def api_key(monkeypatch) -> str:
    key = f"sk-relay-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return key


def post(relay: ModelRelay, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", relay.port, timeout=10)
    try:
        connection.request("POST", f"{relay.prefix}/chat/completions", BODY, headers or {})
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
            connection.request("POST", "/v1/chat/completions", BODY)
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


def test_the_dummy_key_is_replaced_by_the_hosts_key(api_key):
    with ScriptedServer(["hello"]) as server, ModelRelay(server.base_url) as relay:
        status, body = post(relay, {"Authorization": "Bearer dummy", "X-Api-Key": "dummy"})
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
        assert post(relay, {"Authorization": "Bearer dummy"})[0] == 200
    assert "authorization" not in server.requests[0].headers


def test_failures_are_observed_classified_and_reset_by_a_success(api_key):
    replies = [Reply(status=500), Reply(status=503), Reply("fine"), Reply(status=400), Reply(status=429)]
    with ScriptedServer(replies) as server, ModelRelay(server.base_url) as relay:
        statuses = []
        # A 400 refuses the request itself: the agent's ending (see model_ending), no failure of the server.
        for expected_failures in (1, 2, 0, 0, 1):
            statuses.append(post(relay)[0])
            assert relay.consecutive_failures == expected_failures
        assert statuses == [500, 503, 200, 400, 429]  # the scaffold sees the upstream's own answer
        assert [call.error for call in relay.calls] == [
            "model_server_error",
            "model_server_error",
            None,
            None,
            "model_server_error",
        ]
        assert [call.ending for call in relay.calls] == [None, None, None, "ModelRequestRejected", None]
        assert relay.ending[0] == "ModelRequestRejected"
        assert relay.failures == 3
        assert relay.last_error.kind == "model_server_error"
        assert "HTTP 429" in relay.last_error.message
        assert api_key not in relay.last_error.message


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
        assert path.stat().st_mode & 0o777 == 0o666
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(path))
            request = (
                f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                f"Content-Length: {len(BODY)}\r\n\r\n{BODY}"
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
