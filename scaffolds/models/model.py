"""Models: one litellm wrapper for every real provider, keys from the environment only.

API keys are never passed as arguments or stored: litellm reads them from the environment, and
`redact` removes every secret-looking environment value from anything before it is recorded.
Provider failures are `ModelError`s with an infrastructure `kind` (server_error, timeout,
unreachable, bad_request), kept apart from agent failure by the runners.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from repoanchor.scaffolds.records import InfraError

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
MIN_SECRET_CHARS = 8


class ModelConfig(BaseModel):
    model: str
    """litellm model name, e.g. "openai/gpt-4o" or "anthropic/claude-sonnet-4"."""
    api_base: str | None = None
    """OpenAI-compatible base URL (a local server, the scripted server in tests)."""
    temperature: float = 0.0
    timeout: float = 120.0
    """Seconds for one request before it counts as a timeout."""
    max_retries: int = 0
    """Retries inside litellm; the runner does its own, classified retries."""
    price_per_million: tuple[float, float] | None = None
    """(input, output) USD per million tokens; scaffold adapters register it with litellm for models it has
    no price for (local servers). None: litellm's own price map; a model priced nowhere records cost None."""


class ModelError(InfraError):
    """The provider, not the agent, failed; `kind` classifies the infrastructure error."""


@dataclass
class ModelReply:
    content: str
    tool_calls: list[dict] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    """USD, when litellm knows the model's price; None otherwise (never guessed)."""


class LitellmModel:
    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def query(self, messages: list[dict], tools: list[dict] | None = None) -> ModelReply:
        litellm = _litellm()
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "timeout": self.config.timeout,
            "num_retries": self.config.max_retries,
        }
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        if tools:
            kwargs["tools"] = tools
        try:
            response = litellm.completion(**kwargs)
        except Exception as exc:  # litellm raises many provider-specific types: classify, never swallow
            raise ModelError(classify_exception(exc), redact(str(exc))) from exc
        return _reply(litellm, response)


def _litellm():
    # Without this litellm fetches a price map from the internet at import time.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def classify_exception(exc: Exception) -> str:
    """Classify by the whole exception chain: litellm wraps a refused connection in an
    InternalServerError whose cause is the client's connection error."""
    names, seen = [], exc
    while seen is not None and len(names) < 10:
        names.append(type(seen).__name__)
        seen = seen.__cause__ or seen.__context__
    text = " ".join(names) + " " + str(exc)
    if "Timeout" in text:
        return "timeout"
    if "Connect" in text or "ServiceUnavailable" in text:
        return "unreachable"
    if any(word in names[0] for word in ("BadRequest", "NotFound", "Authentication")):
        return "bad_request"
    return "server_error"


_kind = classify_exception  # the earlier private name

# A model call refused for what the request holds is the agent's ending, not the infrastructure's: it
# would fail the same way again (retrying pays for it twice more), and dropping it from the denominators
# would hide the failures of the conditions that use the most context (perturbed repositories, anchoring).
CONTEXT_WINDOW = re.compile(
    r"context[_ ]length|context[_ ]window|maximum context|prompt is too long|input is too long|too many tokens",
    re.IGNORECASE,
)
CONTENT_POLICY = re.compile(r"content[_ ]policy|content management policy|content[_ ]filter|safety system", re.I)
REJECTED_STATUSES = (400, 413, 422)
"""Deterministic 4xx: the request itself is refused. Not 401/403/404 (a key or model name is wrong: the
run's configuration) nor 408/429 (time and rate: retried as infrastructure errors)."""
MODEL_ENDINGS = ("ContextWindowExceeded", "ContentPolicyViolation", "ModelRequestRejected")


def model_ending(status: int | None, text: str) -> str | None:
    """The agent's ending a refused model call stands for (one of MODEL_ENDINGS), or None: not a refusal."""
    if status is not None and status not in REJECTED_STATUSES:
        return None
    if CONTEXT_WINDOW.search(text) or "ContextWindowExceeded" in text:
        return "ContextWindowExceeded"
    if CONTENT_POLICY.search(text) or "ContentPolicyViolation" in text:
        return "ContentPolicyViolation"
    return "ModelRequestRejected" if status is not None else None


def exception_ending(exc: Exception) -> str | None:
    """`model_ending` of a client exception (litellm's or the openai SDK's), by its status and its chain."""
    names, seen = [], exc
    while seen is not None and len(names) < 10:
        names.append(type(seen).__name__)
        seen = seen.__cause__ or seen.__context__
    status = getattr(exc, "status_code", None)
    return model_ending(status if isinstance(status, int) else None, " ".join(names) + " " + str(exc))


def _reply(litellm, response) -> ModelReply:
    message = response.choices[0].message
    calls = [call.model_dump() if hasattr(call, "model_dump") else dict(call) for call in (message.tool_calls or [])]
    usage = getattr(response, "usage", None)
    try:
        cost = litellm.completion_cost(completion_response=response)
    except Exception:  # unknown price: recorded as None rather than a made-up number
        cost = None
    return ModelReply(
        content=message.content or "",
        tool_calls=calls,
        input_tokens=getattr(usage, "prompt_tokens", None),
        output_tokens=getattr(usage, "completion_tokens", None),
        cost=cost,
    )


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret (API keys, tokens, passwords)."""
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


def redact(obj: Any, secrets: list[str] | None = None) -> Any:
    """`obj` with every secret replaced by "***", through nested dicts, lists and strings."""
    secrets = secret_values() if secrets is None else secrets
    if isinstance(obj, str):
        for secret in secrets:
            obj = obj.replace(secret, "***")
        return obj
    if isinstance(obj, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact(v, secrets) for v in obj)
    return obj
