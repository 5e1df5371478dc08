"""Whether a model's provider can be reached with what the environment holds, asked before any run starts.

Without this a missing key surfaces only inside the first run, as an infrastructure error that the matrix
retries (and a rerun then skipped the unit as done). litellm knows which variables each provider reads
(`validate_environment`), so we ask it rather than keep our own table. An explicit `api_base` satisfies the
variables that only say where the server is (OLLAMA_API_BASE); a key is still needed on litellm's openai/
route even for a local server, which ignores its value.
"""

from __future__ import annotations

import os

from repoanchor.scaffolds.models.model import ModelConfig

SINGLE_KEY = {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY", "deepseek": "DEEPSEEK_API_KEY", "openrouter": "OPENROUTER_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY", "fireworks_ai": "FIREWORKS_AI_API_KEY", "cohere": "COHERE_API_KEY",
    "xai": "XAI_API_KEY",
}  # fmt: skip
"""Providers that need exactly one variable, as litellm says (a test keeps this equal to its answer): the
common case is answered without importing litellm, which takes seconds, so a missing key stops at once."""


class MissingCredentials(ValueError):
    """A model's provider needs a variable that the environment does not set."""


def missing_variables(model: ModelConfig) -> list[str]:
    """The environment variables `model`'s provider needs and does not find (empty when it can run)."""
    provider, slash, _ = model.model.partition("/")
    if slash and provider in SINGLE_KEY:
        return [] if os.environ.get(SINGLE_KEY[provider]) else [SINGLE_KEY[provider]]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as model.py: never download a price map
    import litellm

    try:
        report = litellm.validate_environment(model=model.model, api_base=model.api_base)
    except Exception:  # an unknown provider: litellm cannot tell, so the run itself will
        return []
    missing = list(report.get("missing_keys") or [])
    if model.api_base:
        missing = [name for name in missing if not name.endswith(("_API_BASE", "_BASE_URL"))]
    return missing


def refuse_missing_credentials(models: list[ModelConfig], where: list[str] | None = None) -> None:
    """MissingCredentials naming the first model that cannot run, its variable(s) and `where` it was chosen."""
    for index, model in enumerate(models):
        missing = missing_variables(model)
        if not missing:
            continue
        unset = f"{missing[0]}, which is not set" if len(missing) == 1 else f"{', '.join(missing)}, which are not set"
        local = "; any value does for a local server, litellm's client only wants one" if model.api_base else ""
        place = f" ({where[index]})" if where else ""
        raise MissingCredentials(f"model {model.model} needs {unset}{local}{place}")
