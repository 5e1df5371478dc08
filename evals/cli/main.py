"""The `repoanchor` command line: one typer app, one sub-app per job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from repoanchor.evals.cli.errors import ErrorGroup, root_options
from repoanchor.evals.cli.eval_matrix import eval_command
from repoanchor.evals.cli.images import app as images_app
from repoanchor.evals.cli.interop import export_atif_command, export_suite_command, import_command
from repoanchor.evals.cli.outputs import Force, refuse_overwrite
from repoanchor.evals.cli.perturb import app as perturb_app
from repoanchor.evals.cli.presets import app as presets_app
from repoanchor.evals.cli.reports import analyze_command, grade_command, results_command
from repoanchor.evals.cli.run import run_command
from repoanchor.evals.cli.show import show_command
from repoanchor.evals.cli.suite import app as suite_app

app = typer.Typer(
    help="RepoAnchor: evaluate coding agents on semantically equivalent rewrites of real repositories.",
    no_args_is_help=True,
    cls=ErrorGroup,  # every command's errors: one line, exit 2 for bad input (errors.py)
    callback=root_options,
)
app.add_typer(perturb_app, name="perturb")
app.add_typer(suite_app, name="suite")
app.add_typer(images_app, name="images")
app.add_typer(presets_app, name="presets")
app.command("eval")(eval_command)
app.command("show")(show_command)


@app.command()
def steps(
    trajectories: Annotated[
        list[Path],
        typer.Argument(
            exists=True,
            help="Trajectory files (our trajectory.json, mini-swe-agent v1/v2, OpenCode) or run folders holding them.",
        ),
    ],
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON object per line instead of a table.")] = False,
) -> None:
    """Label every step of the given trajectories with a phase (explore, edit, test, or other) and the finer
    category (search and read are explore) by the rubric in docs/STEPS.md.

    The rubric, with every command pattern and the priority rule for compound commands, is docs/STEPS.md in
    the repository. A file that cannot be read is named on stderr and the others are still classified; the
    exit code is 1 when any file failed, 2 when none could be read. What a reader left out of a readable file
    (a line of plain text in an OpenCode stream, a last line cut off) is a `note:` on stderr.

    Examples:

        repoanchor steps runs/single/trajectory.json

        repoanchor steps runs/matrix/units --jsonl > steps.jsonl
    """
    from rich.console import Console
    from rich.table import Table

    from repoanchor.evals.analysis.steps_frame import collect
    from repoanchor.scaffolds.steps.rows import COLUMNS, step_rows

    files, empty_folders = collect(list(trajectories))
    result = step_rows(files)
    result.errors[:0] = empty_folders
    if jsonl:
        for row in result.rows:
            typer.echo(json.dumps(row))
    elif result.rows:  # nothing readable: the errors alone, no empty table
        table = Table(*COLUMNS[:6])
        for row in result.rows:
            table.add_row(*(str(row[c])[:80] for c in COLUMNS[:6]))
        Console().print(table)
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    for error in result.errors:
        typer.echo(f"error: {error}", err=True)
    raise typer.Exit(0 if not result.errors else 1 if result.rows else 2)


app.command("run")(run_command)
app.command("grade")(grade_command)
app.command("analyze")(analyze_command)


export_app = typer.Typer(help="Write our runs in the ecosystem's formats.", no_args_is_help=True)
app.add_typer(export_app, name="export")
export_app.command("atif")(export_atif_command)
export_app.command("suite")(export_suite_command)
app.command("import")(import_command)


@export_app.command("preds")
def export_preds(
    run: Annotated[Path, typer.Argument(help="A run matrix: its YAML file or its `out` folder (holding matrix.json).")],
    out: Annotated[
        Path, typer.Option(help="Folder for one predictions JSONL per model x scaffold x condition x repeat.")
    ],
    include_variants: Annotated[
        bool,
        typer.Option(help="Also Perturb/SPT/Extend units, under their task ids (their patches fit the variant only)."),
    ] = False,
    force: Force = False,
) -> None:
    """SWE-bench predictions files (instance_id, model_name_or_path, model_patch) for the official harness.

    Only original-suite units by default: a perturbed task's patch applies to its variant, not to the
    dataset's repository. Units left out are counted by reason in the printed summary."""
    from repoanchor.evals.interop.predictions import export_predictions
    from repoanchor.evals.runs.matrix import MatrixConfigError

    refuse_overwrite(out, force)
    try:
        summary = export_predictions(run, out, include_variants=include_variants)
    except MatrixConfigError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    typer.echo(json.dumps(summary, indent=1))


app.command("results")(results_command)


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Where the fixture, suites, runs and report go (reruns resume).")] = Path(
        "runs/demo"
    ),
    model: Annotated[
        str | None, typer.Option(help="A litellm model (e.g. openai/gpt-4o) instead of the oracle policy.")
    ] = None,
    api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL for --model.")] = None,
    workers: Annotated[int, typer.Option(help="Parallel builds and runs.")] = 2,
    scaffold: Annotated[list[str] | None, typer.Option(help="Scaffolds to run (repeatable); default both.")] = None,
) -> None:
    """The whole pipeline on the embedded ledger fixture, offline: build and validate the Perturb, SPT and
    Extend suites, run both scaffolds with and without RepoAnchor and with two hint variants, grade,
    analyse and write the report (runs/demo/report/report.html).

    Without --model the model is an ORACLE policy that applies each task's ground-truth patch, served by
    the scripted server on 127.0.0.1; every output says so.
    """
    from repoanchor.evals.demo.pipeline import run_demo
    from repoanchor.scaffolds.models.credentials import MissingCredentials, refuse_missing_credentials
    from repoanchor.scaffolds.models.model import ModelConfig

    try:  # a real model's key is checked before the suites are built (minutes), not at the first run
        refuse_missing_credentials([ModelConfig(model=model, api_base=api_base)] if model else [], ["--model"])
    except MissingCredentials as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    scaffolds = tuple(scaffold) if scaffold else ("mini-swe-agent", "opencode")
    raise typer.Exit(run_demo(out, model=model, api_base=api_base, workers=workers, scaffolds=scaffolds))


if __name__ == "__main__":
    app()
