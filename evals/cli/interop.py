"""`repoanchor import` (other harnesses' runs in) and `repoanchor export atif` (trajectories out)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def import_command(
    source: Annotated[
        Path,
        typer.Argument(
            help="A mini-swe-agent swebench batch folder (preds.json + <id>/<id>.traj.json), a SWE-agent run folder "
            "(*.traj + preds.json or all_preds.jsonl) or an OpenHands output.jsonl (or the folder holding it)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="A new folder for the runs, laid out as `repoanchor eval` writes them.")],
    format: Annotated[str, typer.Option(help="auto, mini-swe-agent, swe-agent or openhands.")] = "auto",
    suite: Annotated[
        list[Path] | None,
        typer.Option(
            help="The suite the runs were made on (repeatable): its tasks are the units, its ground truth "
            "grades them. Without it the units are the imported ids, listed by results, not gradeable."
        ),
    ] = None,  # fmt: skip
    model: Annotated[str | None, typer.Option(help="The model's label (default: the model the runs recorded).")] = None,
    condition: Annotated[str, typer.Option(help="The condition's label.")] = "plain",
    grades: Annotated[
        Path | None,
        typer.Option(
            help="Grades made elsewhere: the SWE-bench harness's report (resolved_ids, ...), its "
            "per-instance report.json, or {instance_id: true/false}; written as the units' grade.json."
        ),
    ] = None,  # fmt: skip
) -> None:
    """Bring runs of other harnesses into our run layout, so `grade` and `results` work on them.

    Each run becomes a matrix unit: result.json (exit status, cost, steps, tokens), a normalised
    trajectory.json and patch.diff (the predictions entry, else the trajectory's submission). An item that
    cannot be read is named on stderr and the rest imported (exit 1); a source that cannot be used exits 2.

    Example: repoanchor import runs/mini-batch --out runs/imported --suite suites/original && repoanchor grade
    runs/imported/matrix.yaml && repoanchor results runs/imported
    """
    from repoanchor.evals.harness.tasks import TaskError
    from repoanchor.evals.interop.imports.runs import SourceError
    from repoanchor.evals.interop.imports.sources import import_runs
    from repoanchor.evals.runs.matrix import MatrixConfigError

    try:
        summary = import_runs(
            source, out, format=format, suites=suite or [], model=model, condition=condition, grades=grades
        )
    except (SourceError, TaskError, MatrixConfigError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    problems = summary.pop("problems")
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    if len(summary["models_recorded"]) > 1:  # a batch is one model; several spellings or models need a look
        recorded = ", ".join(f"{name} ({count})" for name, count in summary["models_recorded"].items())
        typer.echo(f"warning: runs recorded several models: {recorded}; all are labelled {summary['model']!r} "
                   "(import each model's runs separately, or name the label with --model)", err=True)  # fmt: skip
    if summary["patch_only"]:  # gradeable, but nothing to analyse: the step tables will not count them
        typer.echo(f"note: {summary['patch_only']} run(s) have a predictions entry and no trajectory: imported as "
                   "patches alone (graded, not in the step analysis)", err=True)  # fmt: skip
    typer.echo(json.dumps(summary, indent=1))
    raise typer.Exit(1 if problems else 0)


def export_atif_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Trajectory files, run folders or matrix out folders (searched recursively).")
    ],
    out: Annotated[Path, typer.Option(help="Folder for one <name>.atif.json per trajectory.")],
) -> None:
    """Every trajectory found, in Harbor's ATIF (Agent Trajectory Interchange Format, v1.6), for its viewers.

    One agent step per model turn with its tool calls, their outputs and usage; the step labels
    (explore/edit/test) ride in each step's `extra`. A file that cannot be read is named on stderr and the
    others are written (exit 1).

    Example: repoanchor export atif runs/matrix ../shared/data/trajectories --out atif/
    """
    from repoanchor.evals.interop.atif import export_atif

    summary = export_atif(list(runs), out)
    for error in summary["errors"]:
        typer.echo(f"error: {error}", err=True)
    typer.echo(json.dumps({key: value for key, value in summary.items() if key != "errors"}, indent=1))
    raise typer.Exit(1 if summary["errors"] else 0)


def export_suite_command(
    suite: Annotated[Path, typer.Argument(help="A suite folder written by `repoanchor suite build`.")],
    out: Annotated[Path, typer.Option(help="Folder for SUITE/test.jsonl and SUITE/test.parquet (split test).")],
    images: Annotated[
        Path | None,
        typer.Option(help="The task images file of `repoanchor suite images` (default: SUITE.images.json beside it)."),
    ] = None,
) -> None:
    """The suite as a SWE-bench-format dataset, each row naming its task's image (`image_name`), so another
    harness can run it; grade what it produces with `repoanchor import --suite SUITE` and `repoanchor grade`.

    Tasks without a readable ground truth row are left out and counted by reason.

    Example: repoanchor suite images suites/perturb && repoanchor export suite suites/perturb --out datasets/ &&
    mini-extra swebench --subset datasets/perturb --split test ...
    """
    from repoanchor.evals.harness.tasks import TaskError
    from repoanchor.evals.interop.suite_dataset import export_suite

    try:
        summary = export_suite(suite, out, images)
    except (TaskError, ValueError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    for reason in summary["left_out"]:
        typer.echo(f"error: {reason}", err=True)
    typer.echo(json.dumps(summary, indent=1))
    raise typer.Exit(1 if summary["left_out"] else 0)
