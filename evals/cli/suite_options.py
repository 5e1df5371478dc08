"""`suite build`'s selection and ablation options, turned into the library's settings and checked before
anything is built, so that a bad option is one line naming it (exit 2), never a half-built suite."""

from __future__ import annotations

import json

from repoanchor.evals.cli.inputs import parse_options
from repoanchor.evals.presets.apply import suite_fields
from repoanchor.evals.presets.model import Preset
from repoanchor.evals.suites.kinds import SuiteConfig
from repoanchor.evals.suites.selection import Selection, joined_instances
from repoanchor.perturb.sampler.sampler import SamplerConfig
from repoanchor.perturb.transforms import SPT_IDS
from repoanchor.perturb.tree import ApplyConfig, check_options


def selection_from(
    instances: list[str] | None, sample: int | None, stratify: str | None, seed: int, min_per_stratum: int
) -> Selection | None:
    """None when no option asks for a subset: the whole dataset, and a header like before. `instances`: the
    values of each `--instances` given (see `joined_instances`)."""
    instances = joined_instances(instances)
    if stratify and sample is None:
        raise ValueError("--stratify needs --sample N (how many instances to draw)")
    if instances is None and sample is None:
        return None
    columns = [column.strip() for column in (stratify or "").split(",") if column.strip()]
    return Selection(instances=instances, sample=sample, stratify=columns, seed=seed, min_per_stratum=min_per_stratum)


def ablation_settings(
    kind: str, transforms: list[str] | None, options: list[str] | None, sampler: dict
) -> tuple[dict, dict]:
    """({transforms, options} for SuiteConfig, the sampler fields): `--transform` chooses the Perturb/Extend
    transforms, or the SPT sampler's catalogue; `--option ID.KEY=VALUE` must name one of them and a key it
    reads (perturb's `option_names`), as `perturb apply` requires."""
    parsed = parse_options(options or [])
    if kind == "original" and (transforms or parsed):
        raise ValueError("--transform/--option: the original suite perturbs nothing")
    try:
        return _checked(kind, transforms, parsed, sampler)
    except ValueError as error:
        raise ValueError(f"--transform/--option: {error}") from None


def _checked(kind: str, transforms: list[str] | None, parsed: dict, sampler: dict) -> tuple[dict, dict]:
    if kind == "spt":
        catalogue = list(transforms or sampler.get("catalogue") or SPT_IDS)  # a suite's SPT default
        check_options(ApplyConfig(transforms=catalogue, options=parsed))
        if not transforms:
            return {}, {**sampler, **({"options": parsed} if parsed else {})}
        nt = sampler.get("nt", min(SamplerConfig.model_fields["nt"].default, len(catalogue)))
        return {}, {**sampler, "catalogue": catalogue, "nt": nt, **({"options": parsed} if parsed else {})}
    if not transforms and not parsed:
        return {}, sampler
    chosen = list(transforms or SuiteConfig.model_fields["transforms"].default_factory())
    check_options(ApplyConfig(transforms=chosen, options=parsed))
    return {"transforms": chosen, "options": parsed}, sampler


PARAMETERS = {
    "n_variants": "variants",
    "other_file_rate": "other_rate",
    "fraction": "fraction",
    "transforms": "transform",
    "extend": "extend",
}
"""SuiteConfig field -> the `suite build` option that sets it."""


def with_preset(values: dict, preset: Preset, kind: str, given: set[str]) -> dict:
    """The build's option values with the preset's settings where the option was not given: a given --sampler
    or --extend key wins over the preset's, given --option values join the preset's (for the chosen transforms)."""
    if kind == "original":  # nothing to perturb: the preset is only recorded
        return dict(values)
    fields, merged = suite_fields(preset, kind), dict(values)
    for field, param in PARAMETERS.items():
        if field in fields and param not in given:
            merged[param] = fields[field]
    if "extend" in given and fields.get("extend"):
        merged["extend"] = {**fields["extend"], **(values["extend"] or {})}
    merged["sampler"] = {**fields.get("sampler", {}), **values["sampler"]}
    if kind != "spt":
        chosen = set(merged["transform"] or SuiteConfig.model_fields["transforms"].default_factory())
        preset_options = [
            f"{name}.{key}={json.dumps(value)}"
            for name, keys in (fields.get("options") or {}).items()
            if name in chosen
            for key, value in keys.items()
        ]
        merged["option"] = preset_options + list(values["option"] or [])
    return merged
