"""`repoanchor grade`, `results` and `analyze`: a matrix's grades, the papers' tables, the trajectory analysis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from repoanchor.evals.cli.outputs import Force, refuse_overwrite
from repoanchor.evals.cli.ray_options import RayAddress


def grade_command(
    config: Annotated[Path, typer.Argument(help="The matrix YAML the runs were made with.")],
    redo: Annotated[bool, typer.Option("--redo", help="Grade again even where grade.json exists.")] = False,
    provider: Annotated[
        Literal["auto", "image", "local"],
        typer.Option(
            help="Where grades run: image (a network-less container of the task's environment image, see "
            "`repoanchor images build`), local (on the host, no network, no host variables) or auto (image "
            "where one is built, else local with a warning). Each grade.json records which."
        ),
    ] = "auto",
    test_edits: Annotated[
        Literal["strip", "refuse", "keep"],
        typer.Option(
            help="What becomes of a patch's changes to test files, conftest.py, pytest plugins, startup files "
            "(sitecustomize, .pth) and pytest configuration: strip them before grading (recorded in "
            "grade.json), refuse the patch (graded unresolved) or keep them."
        ),
    ] = "strip",
    executor: Annotated[
        Literal["local", "ray"],
        typer.Option(help="local (one grade at a time here) or ray (each grade a Ray task; no shared folders)."),
    ] = "local",
    address: RayAddress = None,
) -> None:
    """Grade a run matrix from its files: each finished unit's patch against its suite's ground truth.

    SWE-bench resolution (FAIL_TO_PASS and PASS_TO_PASS) for Perturb/SPT/original tasks, the family's
    validator for Extend tasks, in a throwaway clone. Writes units/<id>/grade.json (skipped when present
    unless --redo) and prints resolve counts per suite, scaffold and condition. Units that ended in an
    infrastructure error are listed as ungraded, never as failures.

    Example: repoanchor grade examples/matrix-gpt4o.yaml --provider image [--executor ray --address auto]
    """
    from repoanchor.evals.harness.patch_guard import POLICIES
    from repoanchor.evals.runs.grade_runs import grade_matrix
    from repoanchor.evals.runs.matrix import MatrixConfig, MatrixConfigError

    try:
        loaded = MatrixConfig.load(config)
    except MatrixConfigError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    if test_edits not in POLICIES:
        raise typer.BadParameter(f"--test-edits must be one of {', '.join(POLICIES)}, not {test_edits!r}")
    if address and executor != "ray":
        raise typer.BadParameter("--address is for --executor ray")
    if executor == "ray":
        from repoanchor.evals.runs.grade_ray import RayGrader

        with RayGrader(address=address) as grader:
            grades = grade_matrix(loaded, redo=redo, provider=provider, test_edits=test_edits, grade_many=grader)
    else:
        grades = grade_matrix(loaded, redo=redo, provider=provider, test_edits=test_edits)
    table: dict[str, dict] = {}
    for item in grades:
        key = f"{item['suite']}/{item['scaffold']}/{item['condition']}"
        cell = table.setdefault(key, {"resolved": 0, "graded": 0, "ungraded": 0})
        cell["graded" if item["graded"] else "ungraded"] += 1
        cell["resolved"] += bool(item.get("resolved"))
    typer.echo(json.dumps(table, indent=1))


def results_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Run matrices: their YAML files or their `out` folders (holding matrix.json).")
    ],
    out: Annotated[
        Path, typer.Option(help="Folder for results.md, results.html, the CSV tables and the plots (or --force).")
    ] = Path("results"),
    force: Force = False,
) -> None:
    """The papers' tables from graded run matrices: Perturb (original vs perturbed, files read), Extend per
    family, plain vs anchor and no hints vs hints (paired on the source instance, Holm-adjusted, with costs),
    the Jagged Frontier estimator with its forest plot, effort deltas and exploration drift.

    Every unit is counted: rates are given with infrastructure errors excluded and counted as unresolved.
    Grade first (`repoanchor grade MATRIX.yaml`); finished units without a grade are listed, not scored.
    Exit code 1 when a file could not be read (it is named on stderr), 2 on a matrix that cannot be loaded.

    Example: repoanchor results runs/matrix-gpt4o --out results
    """
    from repoanchor.evals.analysis.results.write import write_results
    from repoanchor.evals.runs.matrix import MatrixConfigError

    refuse_overwrite(out, force)
    try:
        summary = write_results(list(runs), out)
    except MatrixConfigError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    for problem in summary["problems"]:
        typer.echo(f"error: {problem}", err=True)
    typer.echo(json.dumps({k: v for k, v in summary.items() if k != "problems"}, indent=1))
    raise typer.Exit(1 if summary["problems"] else 0)


def analyze_command(
    runs: Annotated[
        list[Path],
        typer.Argument(exists=True, help="Run folders or trajectory files (mini-swe-agent v1/v2, OpenCode)."),
    ],
    out: Annotated[
        Path, typer.Option(help="Folder for the tables, plots and report (an existing one needs --force).")
    ] = Path("analysis"),
    force: Force = False,
    condition: Annotated[
        list[str] | None, typer.Option(help="PATH=NAME: runs under PATH belong to condition NAME (repeatable).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every bootstrap.")] = 0,
    n_boot: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 1000,
    metadata: Annotated[
        Path | None,
        typer.Option(exists=True, help="A variant's metadata JSON: its path_resolution_map marks decoy/proxy visits."),
    ] = None,
) -> None:
    """Step table, transition matrices with bootstrap CIs, Δp between conditions, drift measures and a report.

    Conditions default to each trajectory's parent folder name. A file that cannot be read is named on
    stderr and the rest analysed; the exit code is 1 when any file failed.

    Examples:

        repoanchor analyze runs/matrix-gpt4o --out analysis

        repoanchor analyze runs/a runs/b --condition runs/a=plain --condition runs/b=anchor --out analysis --force
    """
    from repoanchor.evals.analysis.analyze import analyze as run_analysis

    mapping = {}
    for item in condition or []:
        path, _, name = item.partition("=")
        if not name:
            raise typer.BadParameter(f"expected PATH=NAME, got {item!r}", param_hint="--condition")
        mapping[path] = name
    refuse_overwrite(out, force)
    roles = json.loads(metadata.read_text()) if metadata else None
    summary = run_analysis(list(runs), out, conditions=mapping or None, seed=seed, n_boot=n_boot, roles=roles)
    for error in summary["errors"]:
        typer.echo(f"error: {error}", err=True)
    typer.echo(json.dumps({k: v for k, v in summary.items() if k != "errors"}, indent=1, default=str))
    raise typer.Exit(1 if summary["errors"] else 0)
