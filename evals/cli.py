"""The `repoanchor` command line: one typer app, one sub-app per job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from repoanchor.perturb.cli import app as perturb_app

app = typer.Typer(
    help="RepoAnchor: evaluate coding agents on semantically equivalent rewrites of real repositories.",
    no_args_is_help=True,
)
app.add_typer(perturb_app, name="perturb")


@app.command()
def steps(
    trajectories: Annotated[list[Path], typer.Argument(help="Trajectory files (mini-swe-agent v1/v2, OpenCode).")],
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON object per line instead of a table.")] = False,
) -> None:
    """Classify every step of the given trajectories as search/read/edit/test/other (STEPS.md).

    A file that cannot be read is named on stderr and the others are still classified; the exit
    code is 1 when any file failed.
    """
    from rich.console import Console
    from rich.table import Table

    from repoanchor.scaffolds.step_rows import COLUMNS, step_rows

    result = step_rows(list(trajectories))
    if jsonl:
        for row in result.rows:
            typer.echo(json.dumps(row))
    else:
        table = Table(*COLUMNS[:6])
        for row in result.rows:
            table.add_row(*(str(row[c])[:80] for c in COLUMNS[:6]))
        Console().print(table)
    for error in result.errors:
        typer.echo(f"error: {error}", err=True)
    raise typer.Exit(1 if result.errors else 0)


@app.command()
def demo() -> None:
    """Run the perturbation engine on a real project and print the validation summary."""
    from repoanchor.evals.demo import run_demo

    raise typer.Exit(run_demo())


if __name__ == "__main__":
    app()
