"""The entries a run matrix lists: models (ModelConfig plus a label) and conditions (plain, anchor, hints).

Kept apart from matrix.py, which expands a config of them into units; `from ...matrix import MatrixModel` still works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from repoanchor.scaffolds.models.model import ModelConfig


class MatrixModel(ModelConfig):
    """A model entry: ModelConfig's fields plus `name`, the label used in unit ids and reports."""

    model_config = ConfigDict(extra="forbid")

    name: str
    model: str = ""
    """litellm model name; defaults to `name`."""

    @model_validator(mode="before")
    @classmethod
    def _a_mapping(cls, data):
        if isinstance(data, str):  # `models: [openai/gpt-4o]` is the first thing people write
            raise ValueError(f"a model is a mapping, e.g. {{name: gpt-4o, model: openai/gpt-4o}}, not {data!r}")
        return data

    @model_validator(mode="after")
    def _default_model(self) -> MatrixModel:
        self.model = self.model or self.name
        return self

    def config(self) -> ModelConfig:
        return ModelConfig(**self.model_dump(exclude={"name"}))


class Condition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    anchor: bool = False
    hints: Literal["none", "structural"] = "none"
    hints_file: Path | None = None
    """A user hint template (jinja2), used instead of `hints`."""
    budget: Literal["separate", "shared"] = "separate"
    """Anchor conditions: `separate` gives each stage the full limits; `shared` makes both stages (stage 1's
    retry included) spend one set of limits, the plain condition's, so plain vs anchor compares equal budgets."""
    stage1_tests: Literal["allowed", "forbidden"] = "allowed"
    """Anchor conditions: `forbidden` records each stage-1 test run as a violation (the RepoMirage paper's rule)."""
