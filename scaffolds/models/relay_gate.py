"""What the model relay lets through: its run's token, the chat endpoint, the run's model, a bounded body.

The scaffold (and so any command of the agent, which inherits its environment) holds the run's random token,
never the key. A request passes only with that token, on the endpoints the scaffold needs (chat completions;
the model listing where asked for), for the model the run was given, under a body size cap: anything else is
refused before it reaches the upstream, so an agent can neither call another endpoint or a pricier model
(which would also escape the run's cost limit) nor send the upstream a body of its choosing. Each refusal is
kept (method, path, reason; never a header or the body) for the run record.
"""

from __future__ import annotations

import hmac
import json
import secrets
from dataclasses import dataclass, field

MAX_BODY = 8 * 1024 * 1024
"""Bytes: a full context window of text is about 1 MB of JSON."""
AUTH_HEADERS = ("authorization", "api-key", "x-api-key")


@dataclass
class Refusal:
    method: str
    path: str
    status: int
    reason: str


@dataclass
class Gate:
    prefix: str
    """The upstream's base path (e.g. /v1): endpoints are allowed below it."""
    model: str | None = None
    """The model id every request must name; None lets any through (a relay not tied to one run)."""
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    max_body: int = MAX_BODY
    allow_models_listing: bool = False
    refusals: list[Refusal] = field(default_factory=list)

    def endpoints(self) -> dict[str, str]:
        allowed = {f"{self.prefix}/chat/completions": "POST"}
        if self.allow_models_listing:
            allowed[f"{self.prefix}/models"] = "GET"
        return allowed

    def check_request(self, method: str, path: str, headers, length: int | None) -> Refusal | None:
        """A refusal before the body is read (key, endpoint, declared size), or None."""
        if not self._has_token(headers):
            return self._refuse(method, path, 401, "the request does not carry this run's relay token")
        wanted = self.endpoints().get(path.split("?", 1)[0])
        if wanted != method:
            return self._refuse(method, path, 404, f"{method} {path} is not an endpoint the scaffold needs")
        if length is not None and length > self.max_body:
            return self._refuse(method, path, 413, f"body of {length} bytes is over the cap of {self.max_body}")
        return None

    def check_body(self, method: str, path: str, body: bytes) -> Refusal | None:
        """A refusal of the body itself (size, the model it names), or None."""
        if len(body) > self.max_body:
            return self.oversized(method, path)
        if self.model is None or method != "POST":
            return None
        try:
            named = json.loads(body).get("model")
        except (ValueError, AttributeError):
            return self._refuse(method, path, 400, "the body is not a JSON object")
        if named != self.model:
            return self._refuse(method, path, 403, f"model {str(named)[:100]!r} is not this run's ({self.model!r})")
        return None

    def after_ending(self, method: str, path: str, ending: str) -> Refusal:
        reason = f"the run already ended ({ending}: the model refused a request); no further call is forwarded"
        return self._refuse(method, path, 400, reason)

    def oversized(self, method: str, path: str) -> Refusal:
        return self._refuse(method, path, 413, f"body over the cap of {self.max_body} bytes")

    def _has_token(self, headers) -> bool:
        for name in AUTH_HEADERS:
            value = headers.get(name) or ""
            value = value.removeprefix("Bearer ").strip() if name == "authorization" else value.strip()
            if value and hmac.compare_digest(value.encode(), self.token.encode()):
                return True
        return False

    def _refuse(self, method: str, path: str, status: int, reason: str) -> Refusal:
        refusal = Refusal(method, path[:200], status, reason)
        self.refusals.append(refusal)
        return refusal
