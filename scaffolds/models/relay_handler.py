"""The relay's HTTP handler: the gate's checks, then the request forwarded and the answer streamed back.

Every request first passes `relay.gate` (token, endpoint, declared size), then its body is read under the
cap and checked (size, model); a refusal is the relay's own answer and closes the connection. A forwarded
answer is passed on chunk by chunk and observed (status, timeouts, a refused request) for the adapter.
"""

from __future__ import annotations

import http.client
import json
from http.server import BaseHTTPRequestHandler

from repoanchor.scaffolds.models.model import model_ending, redact
from repoanchor.scaffolds.models.relay_gate import Refusal
from repoanchor.scaffolds.records import InfraError

# Hop-by-hop headers and the ones the relay sets itself; everything else passes through unchanged.
DROPPED = {"connection", "keep-alive", "proxy-authorization", "proxy-connection", "te", "trailer", "upgrade"}
DROPPED |= {"transfer-encoding", "content-length", "host", "authorization", "api-key", "x-api-key", "accept-encoding"}


def classify(status: int) -> str | None:
    """The infra error kind of an upstream status, None for success."""
    if status < 400:
        return None
    if status == 429 or status >= 500:
        return "model_server_error"
    return "model_bad_request"


def handler_for(relay) -> type[BaseHTTPRequestHandler]:
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
            if refusal is None and relay.ending:
                # The run ended at the model's refusal; a later call (OpenCode's context compaction) is not billed.
                refusal = relay.gate.after_ending(self.command, self.path, relay.ending[0])
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
