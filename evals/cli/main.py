"""The `repoanchor` command line: one typer app, one sub-app per job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from repoanchor.evals.cli.errors import ErrorGroup, root_options
from repoanchor.evals.cli.eval_matrix import eval_command
from repoanchor.evals.cli.images import app as images_app
from repoanchor.evals.cli.interop import export_atif_command, export_suite_command, import_command
from repoanchor.evals.cli.outputs import Force, refuse_overwrite
from repoanchor.evals.cli.perturb import app as perturb_app
from repoanchor.evals.cli.presets import app as presets_app
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
    exit code is 1 when any file failed, 2 when none could be read.

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
    for error in result.errors:
        typer.echo(f"error: {error}", err=True)
    raise typer.Exit(0 if not result.errors else 1 if result.rows else 2)


@app.command()
def run(
    task: Annotated[
        str, typer.Argument(help="A task directory (task.json + repo/), SUITE#TASK_ID or DATASET#INSTANCE_ID.")
    ],
    scaffold: Annotated[
        Literal["mini", "mini-swe-agent", "opencode"], typer.Option(help="mini (mini-swe-agent) or opencode.")
    ] = "mini",
    model: Annotated[
        str, typer.Option(help="litellm model name, e.g. openai/gpt-4o; keys come from the environment.")
    ] = "",
    api_base: Annotated[str | None, typer.Option(help="An OpenAI-compatible base URL (local server, proxy).")] = None,
    anchor: Annotated[bool, typer.Option("--anchor", help="Two stages: write INSTRUCTION.md, then solve.")] = False,
    anchor_budget: Annotated[
        Literal["separate", "shared"],
        typer.Option(
            help="With --anchor: separate (each stage gets the full limits) or shared (both stages spend one set "
            "of limits, as a plain run would)."
        ),
    ] = "separate",
    hints: Annotated[Literal["none", "structural"], typer.Option(help="Hint variant: none or structural.")] = "none",
    hints_file: Annotated[Path | None, typer.Option(help="A user hint template (jinja2), instead of --hints.")] = None,
    templates: Annotated[
        Literal["repoanchor", "mini-swebench"],
        typer.Option(
            help="mini-swe-agent's prompts: repoanchor (ours) or mini-swebench (its installed SWE-bench templates, "
            "the issue as their task; with --anchor our stage prompts stay the user messages)."
        ),
    ] = "repoanchor",
    env: Annotated[
        Literal["auto", "image", "docker", "local"],
        typer.Option(
            "--env",
            help="image (a network-less container of the task's environment image, see `repoanchor images build`), "
            "docker (a container of --image), local (a standalone checkout on the host: trusted policies only, "
            "warns otherwise) or auto (image for a model, local for the oracle; docker for a task directory).",
        ),
    ] = "auto",
    image: Annotated[
        str | None, typer.Option(help="Docker image for --env docker (or instead of --env image's).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Run folder (created; an existing one needs --force).")] = Path(
        "runs/single"
    ),
    force: Force = False,
    step_limit: Annotated[int, typer.Option(help="Most model calls (0 = none).")] = 100,
    cost_limit: Annotated[
        float, typer.Option(help="Most USD per run (0 = none); needs a priced model (litellm's map, or --price).")
    ] = 3.0,
    price: Annotated[
        str | None,
        typer.Option(help="INPUT,OUTPUT USD per million tokens, for a model litellm has no price for (local)."),
    ] = None,
    time_limit: Annotated[float, typer.Option(help="Most wall-clock seconds per run.")] = 1800.0,
    repo: Annotated[Path | None, typer.Option(help="The repository for a dataset row.")] = None,
    repo_cache: Annotated[Path | None, typer.Option(help="Folder of clones named owner__name.")] = None,
    instruction_cache: Annotated[
        Path | None, typer.Option(help="Reuse accepted INSTRUCTION.md files from here.")
    ] = None,
) -> None:
    """Run one task with one scaffold and model, plainly or with the two-stage RepoAnchor workflow.

    Writes the run folder (records, trajectories, prompts sent, patch.diff, summary.json) and prints the
    summary as JSON. Exit code 0 when the agent ran to an end, 3 on an infrastructure error, 2 on bad input.

    Examples:

        repoanchor run runs/suites/perturb#fixture__ledger-1 --model openai/gpt-4o --out runs/one

        repoanchor run task_dir --model openai/gpt-4o --anchor --hints structural --out runs/anchored

        repoanchor show runs/one
    """
    from repoanchor.evals.harness.task_load import load_task
    from repoanchor.evals.harness.tasks import TaskError
    from repoanchor.evals.runs.run_one import RunOptions, check_options, run_task
    from repoanchor.scaffolds.environments.registry import EnvironmentConfig
    from repoanchor.scaffolds.models.credentials import refuse_missing_credentials
    from repoanchor.scaffolds.models.model import ModelConfig
    from repoanchor.scaffolds.records import Limits

    if not model:
        raise typer.BadParameter("give the model, e.g. --model openai/gpt-4o", param_hint="--model")
    refuse_overwrite(out, force)
    try:
        per_million = tuple(float(part) for part in price.split(",")) if price else None
    except ValueError:
        per_million = ()
    if per_million is not None and len(per_million) != 2:
        raise typer.BadParameter(f"{price!r} is not INPUT,OUTPUT (e.g. 2.5,10)", param_hint="--price")
    try:
        model_config = ModelConfig(model=model, api_base=api_base, price_per_million=per_million)
        refuse_missing_credentials([model_config], ["--model"])  # at once, before the task is even read
        loaded = load_task(task, repo, repo_cache)
        environment = EnvironmentConfig(kind=env, **({"image": image} if image else {}))
        options = RunOptions(
            scaffold=scaffold,
            model=model_config,
            limits=Limits(steps=step_limit, cost=cost_limit, wall_seconds=time_limit),
            environment=environment,
            anchor=anchor,
            anchor_budget=anchor_budget,
            hints=hints,
            hints_file=str(hints_file) if hints_file else None,
            templates=templates,
            instruction_cache=instruction_cache,
        )
        check_options(options)
        summary = run_task(loaded, options, out)
    except (TaskError, ValueError, FileNotFoundError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    typer.echo(json.dumps(summary, indent=1))
    raise typer.Exit(3 if summary["infra_error"] else 0)


@app.command()
def grade(
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
    address: Annotated[
        str | None, typer.Option(help="Ray address (e.g. ray://head:10001 or auto); default: a local Ray instance.")
    ] = None,
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


@app.command()
def analyze(
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


@app.command()
def results(
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
