"""The `repoanchor` command line: one typer app, one sub-app per job."""

from __future__ import annotations

import typer

from repoanchor.perturb.cli import app as perturb_app

app = typer.Typer(
    help="RepoAnchor: evaluate coding agents on semantically equivalent rewrites of real repositories.",
    no_args_is_help=True,
)
app.add_typer(perturb_app, name="perturb")


@app.command()
def demo() -> None:
    """Run the perturbation engine on a real project and print the validation summary."""
    from repoanchor.evals.demo import run_demo

    raise typer.Exit(run_demo())


if __name__ == "__main__":
    app()
