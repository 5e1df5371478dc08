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
import os
import socketserver
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from repoanchor.scaffolds.models.loopback import loopback_http, serve, shut
from repoanchor.scaffolds.models.relay_gate import MAX_BODY, Gate, Refusal
from repoanchor.scaffolds.models.relay_handler import DROPPED, handler_for
from repoanchor.scaffolds.records import InfraError


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
        handler = handler_for(self)
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
