"""`repoanchor run`: one agent on one task (a suite task or an ad-hoc repository and issue)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from repoanchor.evals.cli.outputs import Force, refuse_overwrite


def run_command(
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
