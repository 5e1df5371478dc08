"""The entries a run matrix lists: models (ModelConfig plus a label), conditions (plain, anchor, hints) and
suites with their own repeats (`{path: suites/original, repeats: 20}`).

Kept apart from matrix.py, which expands a config of them into units; `from ...matrix import MatrixModel` still works.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from repoanchor.evals.harness.suite_format import MANIFEST_FILE
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


class SuiteEntry(BaseModel):
    """A suite with its own number of repeats, e.g. a baseline run 20 times beside variants run once."""

    model_config = ConfigDict(extra="forbid")

    path: Path
    repeats: int = Field(ge=1)


def with_suite_entries(data):
    """A matrix config's fields with `suites` entries that are {path, repeats} mappings split into the path and
    `suite_repeats` by suite label: the folder's name, as in unit ids, so it survives paths made relative."""
    if not isinstance(data, dict) or not isinstance(data.get("suites"), list):
        return data
    paths, repeats = [], dict(data.get("suite_repeats") or {})
    for number, entry in enumerate(data["suites"]):
        if isinstance(entry, dict):
            try:
                entry = SuiteEntry.model_validate(entry)
            except ValidationError as exc:
                first = exc.errors()[0]
                raise ValueError(f"suites.{number}.{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
            repeats[entry.path.name] = entry.repeats
            entry = entry.path
        paths.append(entry)
    return {**data, "suites": paths, **({"suite_repeats": repeats} if repeats else {})}


def suite_kind(suite: Path) -> str | None:
    """The kind a built suite's manifest names (original, perturb, spt, extend); None where it has none."""
    try:
        manifest = json.loads((Path(suite) / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest.get("suite") if isinstance(manifest, dict) else None
