"""A preset: one paper's protocol (or our defaults) as settings for suite build, the sampler and runs.

Each section is optional; an absent one leaves our defaults in place. Every section is checked against
the model it configures (SuiteConfig, SamplerConfig, Limits), so a preset cannot hold a setting the
toolkit would ignore. What a command records of a preset is `record(preset)`, exactly what
`repoanchor presets show NAME` prints.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from repoanchor.evals.suites.kinds import SuiteConfig
from repoanchor.perturb.sampler.sampler import SamplerConfig
from repoanchor.scaffolds.mini.templates import TemplatesName
from repoanchor.scaffolds.records import Limits

PACKAGE = "repoanchor.evals.presets"


class PresetError(ValueError):
    """A preset that cannot be used; the message names the file and the field."""


class SuiteSettings(BaseModel):
    """SuiteConfig fields for `suite build` (Perturb and Extend; `n_variants` for SPT)."""

    model_config = ConfigDict(extra="forbid")

    other_file_rate: float | None = None
    fraction: float | None = None
    transforms: list[str] | None = None
    options: dict[str, dict] | None = None
    n_variants: int | None = None
    extend: dict | None = None

    def fields(self) -> dict:
        return self.model_dump(exclude_none=True)


class RunSettings(BaseModel):
    """What `eval` changes in a matrix: its limits and every model's temperature."""

    model_config = ConfigDict(extra="forbid")

    limits: dict[str, int | float] = Field(default_factory=dict)
    """Limits fields (steps, cost, wall_seconds, command_timeout)."""
    temperature: float | None = None
    templates: TemplatesName | None = None
    """mini-swe-agent's prompt templates: `mini-swebench` (its installed SWE-bench ones) or `repoanchor` (ours); anchor
    stages keep our stage prompts either way (RunOptions.templates)."""
    suite_repeats: dict[Literal["original", "perturb", "spt", "extend"], Annotated[int, Field(ge=1)]] | None = None
    """Repeats per suite kind (as its manifest names it), over the matrix's for every suite of that kind: Jagged
    Frontier runs the original suite 20 times and each variant once."""


class AnchorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stage1_tests: Literal["allowed", "forbidden"] = "allowed"
    """`forbidden`: a test run in stage 1 is recorded as a violation (the RepoMirage paper's rule)."""


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    source: str
    """Where the settings come from (paper section, released code)."""
    suite: SuiteSettings | None = None
    sampler: dict | None = None
    """SamplerConfig fields for `perturb sample` and SPT suites (`n` is `perturb sample`'s N)."""
    run: RunSettings | None = None
    anchor: AnchorSettings | None = None
    not_reproduced: list[str] = Field(default_factory=list)
    """Parts of the protocol this toolkit does not (yet) run in the paper's form."""

    @model_validator(mode="after")
    def _settings_are_known(self) -> Preset:
        if self.suite:
            _check("suite", SuiteConfig, {"kind": "perturb", **self.suite.fields()})
        if self.sampler is not None:
            _check("sampler", SamplerConfig, self.sampler)
        if self.run:
            _check("run.limits", Limits, self.run.limits)
        return self


def _check(section: str, model: type[BaseModel], values: dict) -> None:
    """Validate `values` as `model` would take them; the error names the preset's field."""
    try:
        model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([section, *map(str, first["loc"])])
        raise ValueError(f"{where}: {first['msg'].removeprefix('Value error, ')}") from None


def names() -> list[str]:
    """The shipped presets, by name."""
    return sorted(p.name.removesuffix(".yaml") for p in resources.files(PACKAGE).iterdir() if p.name.endswith(".yaml"))


def load_preset(name_or_path: str) -> Preset:
    """A shipped preset by name, or a preset YAML file by path."""
    path = Path(name_or_path)
    if not path.suffix:
        if name_or_path not in names():
            raise PresetError(f"unknown preset {name_or_path!r}; shipped: {', '.join(names())} (or a .yaml path)")
        text, where = resources.files(PACKAGE).joinpath(f"{name_or_path}.yaml").read_text("utf-8"), name_or_path
    else:
        try:
            text, where = path.read_text(encoding="utf-8"), str(path)
        except OSError as exc:
            raise PresetError(f"{path}: cannot read the preset: {exc.strerror}") from None
    return parse(text, where)


def parse(text: str, where: str) -> Preset:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PresetError(f"{where}: not YAML: {exc}") from None
    if not isinstance(data, dict):
        raise PresetError(f"{where}: expected a mapping of fields at the top level")
    try:
        return Preset.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(map(str, first["loc"]))
        message = first["msg"].removeprefix("Value error, ")
        raise PresetError(f"{where}: {field}: {message}" if field else f"{where}: {message}") from None


def record(preset: Preset) -> dict:
    """What a run records of the preset, and what `presets show` prints (absent settings: our defaults)."""
    return preset.model_dump(mode="json", exclude_none=True)


def show(preset: Preset) -> str:
    return yaml.safe_dump(record(preset), sort_keys=False, allow_unicode=True, width=100)
