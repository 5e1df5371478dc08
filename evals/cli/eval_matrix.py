"""`repoanchor eval CONFIG`: run a matrix from its YAML file (registered on the main app by cli.py).

Also runnable alone, `python -m repoanchor.evals.cli.eval_matrix CONFIG`, which the crash-safety test uses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from repoanchor.evals.cli.ray_options import RayAddress

EXIT_CODES = {"crashed": 1, "infra_error": 3, "skipped_budget": 4}
"""Checked in this order: a crash (a bug) outranks an infrastructure failure, which outranks a budget stop."""


def eval_command(
    config: Annotated[Path, typer.Argument(help="The matrix YAML: suites, scaffolds, models, conditions, repeats.")],
    executor: Annotated[
        Literal["local", "ray"], typer.Option(help="local (a process pool on this machine) or ray.")
    ] = "local",
    address: RayAddress = None,
    redo: Annotated[bool, typer.Option("--redo", help="Run every unit again, even those with a result file.")] = False,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Units running at once (overrides the config's `workers`).")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show the progress bar and live summary on stderr.")] = True,
    retry_infra: Annotated[
        bool,
        typer.Option(help="Run again the units whose result is an infrastructure error (their agent never ended)."),
    ] = True,
    preset: Annotated[
        str | None,
        typer.Option(
            help="A named protocol (`repoanchor presets list`) or preset YAML: its limits and temperature replace "
            "the matrix file's, e.g. --preset jagged-frontier (250 steps, temperature 1.0); recorded in matrix.json."
        ),
    ] = None,
) -> None:
    """Run a matrix: suites × scaffolds × models × conditions × repeats, one run per unit.

    Resumable: each unit's result is OUT/units/<unit_id>/result.json, written atomically once the unit
    has finished. Rerunning the same command skips units that have one and starts every other unit from
    a clean folder, so a killed or interrupted matrix resumes where it stopped. --redo runs them all again.
    A unit that ended in an infrastructure error is not done: a rerun runs it again (--no-retry-infra keeps it).

    Credentials are checked first: a model whose provider needs a key that is not set (e.g. OPENAI_API_KEY)
    stops the command at once with exit 2, naming the variable.

    Infrastructure errors (model server unreachable or failing, engine down, a worker process dying) are
    retried up to `max_infra_retries` times; a unit still failing is recorded as infra_error and counted
    apart from the agents' own endings. A run that raises (a bug) is recorded as crashed, with its
    traceback, and the matrix goes on.

    Budget: with `cost_budget` (USD) set, no unit starts once the matrix's recorded cost reaches it; the
    remaining units get no result file, so rerunning with a larger budget runs exactly those.

    Prints the summary (also written to OUT/summary.json) as JSON. Exit code 0 when every unit ran to an
    agent ending; 1 if any crashed, 3 if any ended in an infrastructure error, 4 if the budget stopped it,
    2 on a bad config.

    Examples (commented configs in examples/):

        OPENAI_API_KEY=... repoanchor eval examples/matrix-gpt4o.yaml

        repoanchor eval examples/matrix-gpt4o.yaml --workers 8 --no-retry-infra
    """
    from repoanchor.evals.runs.executors import make_executor
    from repoanchor.evals.runs.fingerprint import StaleResults
    from repoanchor.evals.runs.matrix import MatrixConfig, MatrixConfigError
    from repoanchor.evals.runs.run_matrix import model_configs, run_matrix
    from repoanchor.scaffolds.models.credentials import MissingCredentials, refuse_missing_credentials
    from repoanchor.scaffolds.models.pricing import UnpricedModel

    try:
        matrix = MatrixConfig.load(config)
        models, fields = model_configs(matrix)
        refuse_missing_credentials(models, [f"{config}:{field}" for field in fields])  # before any worker starts
        if workers:
            matrix = matrix.model_copy(update={"workers": workers})
        if preset:
            from repoanchor.evals.cli.presets import with_matrix_preset

            matrix = with_matrix_preset(matrix, preset)
        chosen = make_executor(executor, workers=matrix.workers, address=address)
    except (MatrixConfigError, ValueError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    try:
        summary = run_matrix(matrix, executor=chosen, redo=redo, progress=progress, retry_infra=retry_infra)
    # a bad suite or task, stale results, no price, no key
    except (MatrixConfigError, StaleResults, UnpricedModel, MissingCredentials) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    finally:
        chosen.close()
    typer.echo(json.dumps(summary.model_dump(), indent=1))
    raise typer.Exit(next((code for status, code in EXIT_CODES.items() if summary.statuses[status]), 0))


def main() -> None:
    typer.run(eval_command)


if __name__ == "__main__":
    main()
