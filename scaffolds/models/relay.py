"""A loopback model relay: the agent's scaffold gets a per-run token, the relay adds the real key.

OpenCode's bash tool inherits OpenCode's environment, so any key given to OpenCode is readable by the
agent's commands. Instead OpenCode talks to `ModelRelay` on 127.0.0.1 (or only a unix socket, for a container
with no network), and the relay forwards each request that its gate (`relay_gate`: the run's random token,
the chat endpoint, the run's model, a body cap) lets through to the upstream OpenAI-compatible base URL with
`Authorization: Bearer <key>` read from a host environment variable, streaming the answer back chunk by
chunk (server-sent events pass through as they arrive). The key is never logged or stored; refusals are
kept in `refusals` for the run record.

The relay also observes every call (status, refused connection, timeout), so an adapter can stop a
scaffold that keeps retrying a failing server and classify the infrastructure error.
"""

from __future__ import annotations

import http.client
import json
import os
import socketserver
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from repoanchor.scaffolds.models.loopback import loopback_http, serve, shut
from repoanchor.scaffolds.models.model import model_ending, redact
from repoanchor.scaffolds.models.relay_gate import MAX_BODY, Gate, Refusal
from repoanchor.scaffolds.records import InfraError

# Hop-by-hop headers and the ones the relay sets itself; everything else passes through unchanged.
DROPPED = {"connection", "keep-alive", "proxy-authorization", "proxy-connection", "te", "trailer", "upgrade"}
DROPPED |= {"transfer-encoding", "content-length", "host", "authorization", "api-key", "x-api-key", "accept-encoding"}


@dataclass
class Call:
    """One forwarded request as the relay saw it (never its headers or body)."""

    path: str
    status: int | None
    """Upstream HTTP status; None when no response came (refused, timed out)."""
    error: str | None = None
    """The infrastructure error kind when the call failed, else None."""
    ending: str | None = None
    """The agent's ending the call stands for when the model refused the request itself (`model_ending`)."""


def classify(status: int) -> str | None:
    """The infra error kind of an upstream status, None for success."""
    if status < 400:
        return None
    if status == 429 or status >= 500:
        return "model_server_error"
    return "model_bad_request"


SOCKET_USER = 1000
"""The container's agent user, the one process that must reach the socket."""


class ModelRelay:
    """Forwards `base_url` (127.0.0.1), or only `unix_socket` when given, to `upstream` with the real key.

    `model`: the model id requests must name (None: any); `token`: what the scaffold must send as its key
    (random by default, see `token`)."""

    def __init__(
        self,
        upstream: str,
        *,
        key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 120.0,
        unix_socket: str | Path | None = None,
        model: str | None = None,
        token: str | None = None,
        max_body: int = MAX_BODY,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream must be an http(s) URL, got {upstream!r}")
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.prefix = parts.path.rstrip("/")
        self._target = (parts.scheme, parts.hostname, parts.port)
        self.key_env = key_env
        self.timeout = timeout
        self.calls: list[Call] = []
        self.consecutive_failures = 0
        self.last_error: InfraError | None = None
        self.ending: tuple[str, str] | None = None
        """(ending, message) of the first call the model refused for what it held (context window...)."""
        self._lock = threading.Lock()
        self.gate = Gate(self.prefix, model, **({"token": token} if token else {}), max_body=max_body)
        handler = _handler_for(self)
        self.unix_socket = str(unix_socket) if unix_socket else None
        # Where a socket serves, no TCP port is open: any local process could otherwise knock on it.
        self._servers: list[socketserver.BaseServer] = [] if self.unix_socket else [loopback_http(handler)]
        if self.unix_socket:
            Path(self.unix_socket).unlink(missing_ok=True)  # left by a run that was killed
            self._servers.append(socketserver.ThreadingUnixStreamServer(self.unix_socket, handler))
            _restrict(Path(self.unix_socket))
        self._threads = serve(self._servers, "model-relay")

    @property
    def token(self) -> str:
        """The key the scaffold sends: random per relay, useless anywhere else."""
        return self.gate.token

    @property
    def refusals(self) -> list[Refusal]:
        return list(self.gate.refusals)

    @property
    def port(self) -> int:
        if self.unix_socket:
            raise ValueError("this relay serves its unix socket only")
        return self._servers[0].server_address[1]

    @property
    def base_url(self) -> str:
        """What the scaffold takes as its provider base URL (same path as the upstream's)."""
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    @property
    def failures(self) -> int:
        with self._lock:
            return sum(1 for call in self.calls if call.error)

    def observe(self, path: str, status: int | None, error: InfraError | None = None, ending=None) -> None:
        """Count a call; `ending` = (ending, message) for a refused request, which is no failure of the server."""
        with self._lock:
            self.calls.append(Call(path, status, error.kind if error else None, ending[0] if ending else None))
            if ending is not None:
                self.ending = self.ending or ending
            elif error is None:
                self.consecutive_failures = 0
            else:
                self.consecutive_failures += 1
                self.last_error = error

    def connect(self) -> http.client.HTTPConnection:
        scheme, host, port = self._target
        factory = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        return factory(host, port, timeout=self.timeout)

    def upstream_headers(self, headers) -> dict[str, str]:
        forwarded = {k: v for k, v in headers.items() if k.lower() not in DROPPED}
        forwarded["Accept-Encoding"] = "identity"  # so chunks can be passed on as they arrive
        key = os.environ.get(self.key_env) if self.key_env else None
        if key:
            forwarded["Authorization"] = f"Bearer {key}"
        return forwarded

    def close(self) -> None:
        shut(self._servers, self._threads)
        if self.unix_socket:
            Path(self.unix_socket).unlink(missing_ok=True)

    def __enter__(self) -> ModelRelay:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _restrict(socket_path: Path) -> None:
    """The socket for the container's agent user alone where we may give it away (as root, or being that
    user); otherwise any local user may connect, and only the token keeps them out."""
    if os.geteuid() == 0:
        os.chown(socket_path, SOCKET_USER, SOCKET_USER)
    socket_path.chmod(0o600 if os.geteuid() in (0, SOCKET_USER) else 0o666)


def _handler_for(relay: ModelRelay) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # never log: nothing here may carry the key
            pass

        def do_GET(self) -> None:
            self.forward()

        do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

        def read_body(self) -> bytes | None:
            """The body, or None once it grows past the gate's cap (the rest is not read)."""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                body = b""
                while size := int(self.rfile.readline().split(b";")[0], 16):
                    if len(body) + size > relay.gate.max_body:
                        return None
                    body += self.rfile.read(size)
                    self.rfile.readline()
                self.rfile.readline()
                return body
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def forward(self) -> None:
            declared = self.headers.get("Content-Length")
            length = int(declared) if declared and declared.isdigit() else None
            refusal = relay.gate.check_request(self.command, self.path, self.headers, length)
            if refusal is not None:
                self.refuse(refusal)
                return
            body = self.read_body() if self.command == "POST" else None
            if body is None and self.command == "POST":  # chunked, and past the cap
                self.refuse(relay.gate.oversized(self.command, self.path))
                return
            refusal = relay.gate.check_body(self.command, self.path, body or b"")
            if refusal is not None:
                self.refuse(refusal)
                return
            # The relay serves the upstream's own path (/v1/...), so the request path passes through unchanged.
            url = f"{relay.origin}{self.path}"
            connection = relay.connect()
            try:
                connection.request(self.command, self.path, body, relay.upstream_headers(self.headers))
                response = connection.getresponse()
            except TimeoutError:
                self.fail(502, InfraError("model_timeout", f"{url}: no answer within {relay.timeout:g} s"))
                return
            except OSError as exc:
                self.fail(502, InfraError("model_unreachable", f"{url}: {exc.strerror or exc}"))
                return
            try:
                self.relay_response(url, response)
            finally:
                connection.close()

        def relay_response(self, url: str, response: http.client.HTTPResponse) -> None:
            self.send_response(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in DROPPED:
                    self.send_header(name, value)
            length = response.getheader("Content-Length")
            if length:
                self.send_header("Content-Length", length)
            else:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            # Observed before the last bytes go out, so a client that has the whole answer sees it counted.
            head, sent, self.observed = b"", 0, False
            try:
                while chunk := response.read1(65536):
                    head, sent = head if len(head) > 500 else head + chunk, sent + len(chunk)
                    if length and sent >= int(length):
                        self.answered(url, response.status, head)
                    self.wfile.write(chunk if length else b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.answered(url, response.status, head)
                if not length:
                    self.wfile.write(b"0\r\n\r\n")
            except TimeoutError:
                self.close_connection = True
                error = InfraError("model_timeout", f"{url}: the answer stalled for {relay.timeout:g} s")
                self.answered(url, response.status, head, error)
            except (BrokenPipeError, ConnectionResetError):  # the client went away (e.g. was stopped)
                self.close_connection = True
            except OSError as exc:
                self.close_connection = True
                error = InfraError("model_unreachable", f"{url}: connection lost mid-answer: {exc}")
                self.answered(url, response.status, head, error)

        def answered(self, url: str, status: int, head: bytes, error: InfraError | None = None) -> None:
            if self.observed:
                return
            self.observed = True
            kind = classify(status)
            text = redact(head[:500].decode("utf-8", "replace"))
            ending = model_ending(status, text) if error is None and kind == "model_bad_request" else None
            if ending:
                relay.observe(self.path, status, None, (ending, f"{url} answered HTTP {status}: {text}"))
                return
            if error is None and kind:
                error = InfraError(kind, f"{url} answered HTTP {status}: {text}")
            relay.observe(self.path, status, error)

        def refuse(self, refusal: Refusal) -> None:
            """The relay's own answer; the connection is closed (an unread body must not be taken for a request)."""
            self.close_connection = True
            data = json.dumps({"error": {"message": f"relay: {refusal.reason}", "type": "relay_refused"}}).encode()
            try:
                self.send_response(refusal.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass

        def fail(self, status: int, error: InfraError) -> None:
            relay.observe(self.path, None, error)
            data = json.dumps({"error": {"message": f"relay: {error.message}", "type": error.kind}}).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                self.close_connection = True

    return Handler
