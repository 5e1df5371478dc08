"""Keywords for the keyword-bound SPTs: one LLM call per instance, cached on disk, offline only when asked.

The keyword-bound transforms plant decoys an agent finds when it greps for what the issue names:
dead-method takes method names, dead-string-assign string literals. One completion through
litellm (temperature 0, a JSON object {methods, string_literals}) answers for the whole instance;
the answer is cached under sha256(model + prompt), written atomically, so a rerun makes no call.
API keys come from the environment through litellm and are never written: the cache holds the
model name and the answer only. Without a model the deterministic `keywords_offline` extractor is
used; when a model was asked for and its call or answer fails, that is an error (`KeywordError`), unless
`fallback="offline"` was chosen: then the offline extractor is used and the reason recorded. The source of
every instance's keywords (llm, offline, none) is in its metadata.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from repoanchor.perturb.atomic import write_atomic
from repoanchor.perturb.sampler.keywords_offline import is_method_name, offline_keywords

CACHE_FORMAT = "repoanchor.keywords-cache/1"
MAX_LITERAL_CHARS = 200
SYSTEM_PROMPT = """\
You help build perturbed copies of a software repository for an experiment on coding agents.
Read the issue and list the search terms a developer would grep the repository for to locate
the code that must change.

Answer with one JSON object and nothing else: {"methods": [...], "string_literals": [...]}.
- "methods": names of functions or methods defined in the project that the issue mentions or
  implies, including project frames of a traceback; bare names (no module or class prefix)
  unless the issue itself qualifies them.
- "string_literals": strings that are hard-coded in the project's source, such as error
  messages, option names or dictionary keys quoted in the issue. Leave out messages produced
  by Python itself, values invented for a reproduction, file paths, versions and identifiers.
Prefer empty lists to guesses."""


class KeywordConfig(BaseModel):
    """Where keywords come from. Secrets are not fields: litellm reads them from the environment."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    model: str | None = None
    """litellm model id (e.g. `openai/gpt-4o-mini`); None uses the offline extractor."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server, e.g. a local vLLM; None = the provider default."""
    cache_dir: Path | None = None
    """Answer cache; None = $REPOANCHOR_CACHE/keywords, else ./.cache/keywords."""
    timeout: float = Field(60.0, gt=0)
    """Seconds allowed for the call."""
    retries: int = Field(2, ge=0)
    """litellm retries of a failed call."""
    max_tokens: int = Field(2048, ge=16)
    """Completion budget; reasoning models may need more."""
    limit: int = Field(20, ge=1)
    """Most keywords kept per list (the sampler then binds at most Nk per transform)."""
    fallback: Literal["error", "offline"] = "error"
    """When the model's call or answer fails: an error (the default), or the offline extractor, recorded."""


class KeywordError(ValueError):
    """The model asked for gave no keywords, and no fallback was chosen."""


@dataclass(frozen=True)
class Keywords:
    methods: tuple[str, ...]
    string_literals: tuple[str, ...]
    source: str
    """"llm", "offline" or "none" (no issue text)."""
    reason: str
    model: str | None = None
    cached: bool = field(default=False, compare=False)
    """A cache hit; left out of `to_dict` so reruns write identical metadata."""

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "reason": self.reason,
            "model": self.model,
            "methods": list(self.methods),
            "string_literals": list(self.string_literals),
        }


def extract_keywords(issue: str | None, config: KeywordConfig | None = None) -> Keywords:
    """Keywords for one instance's issue. A cache problem costs a call, never an error; a failing model is a
    KeywordError unless `config.fallback` is "offline"."""
    config = config or KeywordConfig()
    if not issue or not issue.strip():
        return Keywords((), (), "none", "no issue text")
    if not config.model:
        return _offline(issue, config, "no model configured")
    messages = build_messages(issue)
    path = cache_dir(config) / f"{cache_key(config.model, messages, config.api_base)}.json"
    answer = _read_cache(path)
    cached = answer is not None
    if answer is None:
        try:
            answer = parse_answer(_complete(config, messages))
        except Exception as exc:  # any provider, network or format failure: an error, or the chosen fallback
            said = _redact(str(exc))[:500]
            if config.fallback != "offline":
                raise KeywordError(
                    f"keyword extraction with {config.model} failed ({_describe(exc)}: {said}); fix the model "
                    "settings, or pass --keywords-fallback offline to use the offline extractor instead"
                ) from None
            reason = f"llm call failed ({_describe(exc)}); offline extraction used (--keywords-fallback offline)"
            warnings.warn(f"keyword extraction with {config.model}: {said}", stacklevel=2)
            return _offline(issue, config, reason, config.model)
        try:
            _write_cache(path, {"format": CACHE_FORMAT, "model": config.model, "answer": answer})
        except OSError as exc:  # a read-only or full disk costs a repeated call later, not this answer
            warnings.warn(f"keyword cache {path} not written: {exc}", stacklevel=2)
    methods, literals = normalize(answer, config.limit)
    return Keywords(methods, literals, "llm", f"answer of {config.model}", config.model, cached)


def build_messages(issue: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": f"Issue:\n\n{issue.strip()}"}]


def cache_key(model: str, messages: list[dict], api_base: str | None = None) -> str:
    """The answer's key: the model, where it is served (another server may answer differently) and the prompt."""
    prompt = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    served = f"{model}\n{api_base}" if api_base else model
    return hashlib.sha256(f"{served}\n{prompt}".encode()).hexdigest()


def cache_dir(config: KeywordConfig) -> Path:
    if config.cache_dir is not None:
        return config.cache_dir
    return Path(os.environ.get("REPOANCHOR_CACHE") or ".cache") / "keywords"


def parse_answer(text: str | None) -> dict:
    """The JSON object in a model answer (a ```json fence is tolerated); ValueError otherwise."""
    if not text:
        raise ValueError("empty answer")
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)
    candidate = fenced.group(1) if fenced else text[text.find("{") : text.rfind("}") + 1]
    data = json.loads(candidate)
    if not isinstance(data, dict) or not all(isinstance(data.get(k, []), list) for k in ("methods", "string_literals")):
        raise ValueError("answer is not {methods: [...], string_literals: [...]}")
    return {k: [v for v in data.get(k, []) if isinstance(v, str)] for k in ("methods", "string_literals")}


def normalize(answer: dict, limit: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Methods become bare, identifier-valid names; literals non-empty, bounded strings; no repeats."""
    methods = [m.strip().removesuffix("()").rsplit(".", 1)[-1] for m in answer.get("methods", [])]
    literals = [s for s in answer.get("string_literals", []) if s.strip() and len(s) <= MAX_LITERAL_CHARS]
    methods = [m for m in methods if is_method_name(m)]
    return tuple(dict.fromkeys(methods))[:limit], tuple(dict.fromkeys(literals))[:limit]


def _offline(issue: str, config: KeywordConfig, reason: str, model: str | None = None) -> Keywords:
    methods, literals = offline_keywords(issue, config.limit)
    return Keywords(tuple(methods), tuple(literals), "offline", reason, model)


def _complete(config: KeywordConfig, messages: list[dict]) -> str | None:
    # Without this litellm downloads a price map from the internet at import time.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # slow (seconds): imported only when a model is configured and the cache misses

    litellm.suppress_debug_info = True
    response = litellm.completion(
        model=config.model,
        messages=messages,
        temperature=0,
        max_tokens=config.max_tokens,
        response_format={"type": "json_object"},
        api_base=config.api_base,
        timeout=config.timeout,
        num_retries=config.retries,
        drop_params=True,
    )
    return response.choices[0].message.content


def _read_cache(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != CACHE_FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {CACHE_FORMAT}")
        return parse_answer(json.dumps(data["answer"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        warnings.warn(f"corrupt keyword cache file {path} ({exc}); asking the model again", stacklevel=3)
        return None


def _write_cache(path: Path, data: dict) -> None:
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__}{f', HTTP {status}' if status else ''}"


def _redact(text: str) -> str:
    """Blank out the values of secret-looking environment variables before a message is shown."""
    for name, value in os.environ.items():
        if len(value) >= 8 and re.search(r"KEY|TOKEN|SECRET|PASSWORD", name, re.IGNORECASE):
            text = text.replace(value, "***")
    return text
