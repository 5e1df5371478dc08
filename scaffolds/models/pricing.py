"""Whether a run's cost can be known: a model needs a price (its own, or litellm's) for a cost limit to bind.

Unpriced, a scaffold records cost None (unknown, not free), its per-run cost limit cannot stop anything and
a matrix budget would count the run as 0 USD. So a cost limit or budget with an unpriced model is refused
up front, unless a price is given or the limit is turned off (0) on purpose.
"""

from __future__ import annotations

import os

from repoanchor.scaffolds.models.model import ModelConfig


def litellm_knows_price(name: str) -> bool:
    """Whether litellm's (local, never downloaded) price map prices the model."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    try:
        info = litellm.get_model_info(name)
    except Exception:  # litellm raises for models missing from its map
        return False
    return bool(info.get("input_cost_per_token") or info.get("output_cost_per_token"))


def is_priced(model: ModelConfig) -> bool:
    return model.price_per_million is not None or litellm_knows_price(model.model)


class UnpricedModel(ValueError):
    """A cost limit or budget was asked of a model whose cost cannot be known."""


def refuse_unpriced(models: list[ModelConfig], cost_limit: float, budget: float = 0.0) -> None:
    """UnpricedModel naming the models, when a cost limit or budget is set and some model has no price."""
    if not cost_limit and not budget:
        return
    unpriced = sorted({model.model for model in models if not is_priced(model)})
    if unpriced:
        limits = " and ".join(
            text
            for text, on in ((f"limits.cost {cost_limit:g}", cost_limit), (f"cost_budget {budget:g}", budget))
            if on
        )
        raise UnpricedModel(
            f"{', '.join(unpriced)}: no price (none given, none in litellm's map), so {limits} cannot be enforced "
            "(its runs would count as 0 USD). Give the model price_per_million: [input, output] (USD per million "
            "tokens), or turn the limit off on purpose with limits.cost: 0 (and cost_budget: 0)"
        )
