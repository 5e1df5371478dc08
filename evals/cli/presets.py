"""`repoanchor presets list|show`: the named protocols, and the `--preset` helpers the other commands share.

A preset's settings apply where the user did not give the option on the command line (typer/click report
where each value came from), so `--preset jagged-frontier --variants 5` is the paper's protocol with five
variants; the preset is recorded as `presets show` prints it, the settings actually used beside it."""

from __future__ import annotations

import json
from typing import Annotated

import typer

app = typer.Typer(help="The papers' protocols (and our defaults) as named presets.", no_args_is_help=True)


@app.command("list")
def list_presets() -> None:
    """Each shipped preset's name and description."""
    from repoanchor.evals.presets.model import load_preset, names

    for name in names():
        typer.echo(f"{name}\t{load_preset(name).description}")


@app.command("show")
def show_preset(
    name: Annotated[str, typer.Argument(help="A shipped preset (see `presets list`) or a preset YAML file.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON instead of YAML.")] = False,
) -> None:
    """Print a preset exactly as a run under it records it.

    Example: repoanchor presets show jagged-frontier"""
    from repoanchor.evals.presets.model import record, show

    preset = load_or_exit(name)
    typer.echo(json.dumps(record(preset), indent=1) if as_json else show(preset), nl=as_json)


def load_or_exit(name: str):
    """The preset, or a one-line error naming the file and field (exit 2)."""
    from repoanchor.evals.presets.model import PresetError, load_preset

    try:
        return load_preset(name)
    except PresetError as error:
        typer.echo(f"error: --preset: {error}", err=True)
        raise typer.Exit(2) from error


def given(ctx: typer.Context) -> set[str]:
    """The parameters the user set (command line or environment), as opposed to their defaults."""
    chosen = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)  # by name: typer may carry its own copy of click's enum
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            chosen.add(name)
    return chosen


SAMPLE_OPTIONS = {"catalogue": "transform", "test_patterns": "test_pattern"}
"""SamplerConfig field -> the `perturb sample` option that sets it, where the names differ."""


def with_sampler_preset(fields: dict, name: str, chosen: set[str]) -> dict:
    """`perturb sample`'s SamplerConfig fields with the preset's where no option was given, and the preset."""
    from repoanchor.evals.presets.apply import sampler_fields
    from repoanchor.evals.presets.model import record

    preset = load_or_exit(name)
    merged = dict(fields)
    for field, value in sampler_fields(preset).items():
        if SAMPLE_OPTIONS.get(field, field) not in chosen:
            merged[field] = value
    return {**merged, "preset": record(preset)}


def with_matrix_preset(matrix, name: str):
    """The matrix with the preset's limits, temperature, templates and per-kind suite repeats (the preset, named on
    the command line, wins over the matrix file for the settings it names) and the preset itself, which matrix.json
    then records."""
    from repoanchor.evals.presets.apply import matrix_updates
    from repoanchor.evals.presets.model import record
    from repoanchor.evals.runs.matrix import MatrixModel
    from repoanchor.evals.runs.matrix_entries import suite_kind
    from repoanchor.scaffolds.records import Limits

    preset = load_or_exit(name)
    kinds = {suite.name: suite_kind(suite) for suite in matrix.suites}
    models = [model.model_dump() for model in matrix.models]
    updates = matrix_updates(preset, matrix.limits.model_dump(), models, kinds)
    typed = {"limits": Limits(**updates["limits"])} if "limits" in updates else {}
    typed |= {"models": [MatrixModel(**model) for model in updates["models"]]} if "models" in updates else {}
    typed |= {"templates": updates["templates"]} if "templates" in updates else {}
    if "suite_repeats" in updates:  # the preset's, for the suites of the kinds it names; the matrix's elsewhere
        typed["suite_repeats"] = {**matrix.suite_repeats, **updates["suite_repeats"]}
    if preset.anchor is not None:  # every anchor condition follows the protocol's stage-1 rule
        rule = {"stage1_tests": preset.anchor.stage1_tests}
        typed["conditions"] = [c.model_copy(update=rule) if c.anchor else c for c in matrix.conditions]
    return matrix.model_copy(update={**typed, "preset": record(preset)})
