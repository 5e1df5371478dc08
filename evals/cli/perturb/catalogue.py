"""`repoanchor perturb check-catalogue`: every transform alone, and the stacks, against a project's own tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from repoanchor.evals.cli.outputs import progress_bar

err = Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the terminal's width
RECHECK_HELP = (
    "When a variant changes tests, run it and the original once more: a change the variant does not repeat is "
    "listed as unconfirmed (a timing test on a busy machine), one the original does not repeat as flaky."
)


def check_catalogue_command(
    src: Annotated[Path, typer.Argument(help="A project with its own test suite (left untouched).")],
    out: Annotated[Path, typer.Argument(help="Where rows, tables and scratch trees go; a rerun resumes there.")],
    test_cmd: Annotated[
        str, typer.Option(help="The project's test command, run in each tree (junit XML is added for pytest).")
    ],
    transform: Annotated[
        list[str] | None, typer.Option("--transform", "-t", help="Only these transforms (default: all 17).")
    ] = None,
    stacks: Annotated[bool, typer.Option(help="Also the two stacks: the 14 SPTs together, all 17 together.")] = True,
    repeat: Annotated[int, typer.Option(help="Baseline runs; tests whose outcome varies are flaky and left out.")] = 2,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds allowed for one run of the test suite.")] = 1800,
    keyword: Annotated[
        list[str] | None,
        typer.Option(help="Keyword for dead-method and dead-string-assign (default: describe_state / a phrase)."),
    ] = None,
    recheck: Annotated[bool, typer.Option(help=RECHECK_HELP)] = True,
):
    """Each transform alone at phi = 1.0 on every eligible file, the project's tests on both trees: a table of
    sites rewritten, tests compared and outcomes changed, with every changed test and the sites near it.

    Exit 0 when no variant changed an outcome, 1 when some did (listed in OUT/catalogue.md; a change the
    recheck did not repeat is listed as unconfirmed, and still fails), 2 on bad input or a baseline that ran no
    tests."""
    from repoanchor.perturb.validation.catalogue import KEYWORDS, check_catalogue, plan
    from repoanchor.perturb.validation.testrun import InfrastructureError

    if not src.is_dir():
        raise typer.BadParameter(f"{src} is not a directory", param_hint="SRC")
    if out.resolve().is_relative_to(src.resolve()):
        raise typer.BadParameter(f"{out} is inside SRC: the trees would be copied into each other", param_hint="OUT")
    keywords = {name: list(keyword) for name in KEYWORDS} if keyword else None
    try:
        planned = plan(list(transform) if transform else None, stacks)
        with progress_bar(err) as bar:
            task = bar.add_task("checking the catalogue", total=len(planned))
            rows = check_catalogue(
                src, out, test_cmd, transforms=list(transform) if transform else None, stacks=stacks,
                repeat=repeat, timeout=timeout, keywords=keywords, on_row=lambda row: bar.advance(task),
                recheck=recheck,
            )  # fmt: skip
    except (ValueError, InfrastructureError) as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc
    listed = ("changed_tests", "unconfirmed_tests")
    summary = [{k: v for k, v in vars(row).items() if k not in listed} for row in rows]
    typer.echo(json.dumps({"out": str(out), "rows": summary}, indent=1))
    failures = ("changed", "unconfirmed", "missing", "added", "compile_errors", "infra_error")
    broke = [row for row in rows if any(getattr(row, failure) for failure in failures)]
    raise typer.Exit(1 if broke else 0)
