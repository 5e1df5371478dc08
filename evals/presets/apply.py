"""A preset as the settings each command takes: SuiteConfig fields for `suite build`, SamplerConfig fields
for `perturb sample`, limits and temperature for a matrix. Settings a user gives on the command line win
over the preset's, which win over our defaults; the CLI decides which were given."""

from __future__ import annotations

from repoanchor.evals.presets.model import Preset

SAMPLER_ONLY = ("n", "seed", "gold_files", "preset")
"""Sampler fields that are per batch, not per protocol: an SPT suite sets them itself (n is --variants)."""


def suite_fields(preset: Preset, kind: str) -> dict:
    """SuiteConfig fields for a suite of `kind` (the Perturb/Extend settings, the SPT sampler)."""
    fields = preset.suite.fields() if preset.suite else {}
    if kind == "spt" and preset.sampler is not None:
        fields["sampler"] = {k: v for k, v in preset.sampler.items() if k not in SAMPLER_ONLY}
    return fields


def sampler_fields(preset: Preset) -> dict:
    """SamplerConfig fields for `perturb sample`."""
    return dict(preset.sampler or {})


def matrix_updates(preset: Preset, limits: dict, models: list[dict], suite_kinds: dict | None = None) -> dict:
    """MatrixConfig updates: the preset's limits over the matrix's, its temperature for every model, its templates,
    and its repeats for each suite (`suite_kinds`: suite label -> kind) of a kind it names."""
    if preset.run is None:
        return {}
    updates: dict = {"limits": {**limits, **preset.run.limits}}
    by_kind = preset.run.suite_repeats or {}
    repeats = {label: by_kind[kind] for label, kind in (suite_kinds or {}).items() if kind in by_kind}
    if repeats:
        updates["suite_repeats"] = repeats
    if preset.run.templates is not None:
        updates["templates"] = preset.run.templates
    if preset.run.temperature is not None:
        updates["models"] = [{**model, "temperature": preset.run.temperature} for model in models]
    return updates
