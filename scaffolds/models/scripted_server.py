"""A scripted OpenAI-compatible chat server on 127.0.0.1, so real clients run their real code offline.

litellm, the openai SDK or OpenCode's `@ai-sdk/openai-compatible` provider talk to it exactly as
to a hosted model: `POST /v1/chat/completions` (or `/chat/completions`) answers with the next
queued `Reply`, as one JSON body or, when the request asks for `stream`, as server-sent events.
Every request is recorded (path, headers, JSON body) in order. An empty queue answers 500, so a
client that calls more often than scripted fails loudly instead of hanging.

    with ScriptedServer([Reply('{"a": 1}')]) as server:
        litellm.completion(model="openai/scripted", api_base=server.base_url, api_key="x", ...)
        assert len(server.requests) == 1
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from repoanchor.scaffolds.models.loopback import loopback_http, serve, shut
from repoanchor.scaffolds.models.scripted_answers import chunks, completion, response

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
RESPONSES_PATHS = ("/v1/responses", "/responses")
MODEL_PATHS = ("/v1/models", "/models")


@dataclass
class Reply:
    """One scripted answer. `status` != 200 sends `body` (or an OpenAI-style error) instead."""

    content: str | None = ""
    tool_calls: list[dict] = field(default_factory=list)
    """OpenAI tool calls: {"id", "type": "function", "function": {"name", "arguments"}}."""
    status: int = 200
    body: dict | None = None
    """A raw JSON body sent as is, replacing the completion built from content/tool_calls."""
    delay: float = 0.0
    """Seconds to wait before answering (timeouts, concurrency)."""
    usage: dict = field(default_factory=lambda: {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    """Lower-cased names (clients differ in case); in memory only, since they carry API keys."""
    body: dict
    received: float = field(default_factory=time.monotonic)
    """When it arrived (time.monotonic): tests time what follows a call, not a loaded machine's start-up."""


class ScriptedServer:
    """Serves queued `Reply`s on a free port of 127.0.0.1 until closed; usable as a context manager."""

    def __init__(
        self,
        replies: Iterable[Reply | str] = (),
        *,
        model: str = "scripted",
        responder: Callable[[dict], Reply] | None = None,
    ) -> None:
        self.model = model
        self.responder = responder
        """Computes each reply from the request body instead of the queue (a policy such as the demo's oracle)."""
        self.requests: list[Request] = []
        self.dropped = 0
        """Connections whose client went away before its reply was written (an agent stopped mid-call)."""
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.push(*replies)
        self._httpd = loopback_http(_handler_for(self))
        self._threads = serve([self._httpd], "scripted-server")

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What OpenAI-compatible clients take as api_base / baseURL."""
        return f"{self.url}/v1"

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def push(self, *replies: Reply | str) -> None:
        with self._lock:
            self._replies.extend(Reply(r) if isinstance(r, str) else r for r in replies)

    def close(self) -> None:
        shut([self._httpd], self._threads)

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _next(self, request: Request) -> Reply | None:
        with self._lock:
            self.requests.append(request)
            if self.responder is None:
                return self._replies.popleft() if self._replies else None
        return self.responder(request.body)


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def handle(self) -> None:
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):  # the client stopped listening: counted, not a failure
                with server._lock:
                    server.dropped += 1

        def do_GET(self) -> None:
            if self.path.split("?")[0] not in MODEL_PATHS:
                self._json(404, _error("not found", "not_found"))
                return
            self._json(200, {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": "me"}]})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.split("?")[0]
            if path not in CHAT_PATHS + RESPONSES_PATHS:
                self._json(404, _error(f"no route {path}", "not_found"))
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._json(400, _error("request body is not JSON", "invalid_request_error"))
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                reply = server._next(Request(path, headers, body))
            except Exception as exc:  # a broken policy must fail the request loudly, not hang the client
                self._json(500, _error(f"scripted server: responder failed: {exc!r}", "server_error"))
                return
            serial = len(server.requests)
            if reply is None:
                self._json(500, _error("scripted server: no reply left in the queue", "server_error"))
                return
            time.sleep(reply.delay)
            if reply.status != 200 or reply.body is not None:
                self._json(reply.status, reply.body or _error(f"scripted error {reply.status}", "server_error"))
            elif path in RESPONSES_PATHS:
                self._json(200, response(reply, serial, server.model))
            elif body.get("stream"):
                self._sse(chunks(reply, serial, server.model))
            else:
                self._json(200, completion(reply, serial, server.model))

        def _json(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, events: list[dict]) -> None:
            data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _error(message: str, kind: str) -> dict:
    return {"error": {"message": message, "type": kind, "code": None}}
