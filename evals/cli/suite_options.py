"""`suite build`'s selection and ablation options, turned into the library's settings and checked before
anything is built, so that a bad option is one line naming it (exit 2), never a half-built suite."""

from __future__ import annotations

import json
from pathlib import Path

import typer

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


def json_option(text: str | None, option: str) -> dict | None:
    """A JSON object given inline or as a file's path (`--sampler`, `--extend`); a bad one names the option."""
    if not text:
        return None
    try:
        data = json.loads(Path(text).read_text() if Path(text).is_file() else text)
    except (json.JSONDecodeError, OSError) as exc:
        raise typer.BadParameter(f"{option}: neither a JSON object nor a JSON file ({exc})") from exc
    if not isinstance(data, dict):
        raise typer.BadParameter(f"{option}: expected a JSON object")
    return data


def check_executor(executor: str, address: str | None, venv_cache: Path | None) -> None:
    """Options that only make sense with one executor, refused with the other."""
    if address and executor != "ray":
        raise ValueError("--address is for --executor ray")
    if venv_cache and executor == "ray":  # a folder here; a node has its own
        raise ValueError("--venv-cache is a folder on this machine: Ray nodes use their own venv caches")


def exit_if_no_task(report, dataset: str, summary: dict) -> None:
    """Exit 1 with the rejections' first reasons where the build made no task (no readable row, or every
    instance rejected): an empty suite is a failed build, whatever the JSON summary above says."""
    if report.instances == 0:
        typer.echo(
            f"error: {dataset} holds no readable row: the suite has no task (see {report.out}/rejected.jsonl)", err=True
        )
        raise typer.Exit(1)
    if report.tasks == 0:
        rejected = f"all {report.instances} instance(s) were rejected"
        typer.echo(f"error: the {report.kind} suite has no task: {rejected}", err=True)
        for stage, count in summary["rejections"]["by_stage"].items():
            typer.echo(f"  {count} at stage {stage}", err=True)
        for item in summary["rejections"]["first"]:
            typer.echo(f"  {item['task_id'] or item['instance_id']} [{item['stage']}]: {item['reason']}", err=True)
        typer.echo(f"all reasons: {report.out / 'rejected.jsonl'}", err=True)
        raise typer.Exit(1)
