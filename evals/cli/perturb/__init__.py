"""`repoanchor perturb ...`: list, apply, validate, sample and check-catalogue. Thin: parses and calls."""

from __future__ import annotations

import typer

from repoanchor.evals.cli.perturb.apply import apply, list_transforms, validate
from repoanchor.evals.cli.perturb.catalogue import check_catalogue_command
from repoanchor.evals.cli.perturb.sample import sample

app = typer.Typer(
    help="Build semantically equivalent variants of a source tree and prove them equivalent.", no_args_is_help=True
)
# In the order --help has always listed them.
app.command("list")(list_transforms)
app.command("apply")(apply)
app.command("validate")(validate)
app.command("sample")(sample)
app.command("check-catalogue")(check_catalogue_command)
