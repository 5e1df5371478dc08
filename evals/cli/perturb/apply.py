"""`repoanchor perturb list|apply|validate`: the catalogue, one variant of a tree, and differential testing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from repoanchor.evals.cli.inputs import parse_options, refuse_absent
from repoanchor.evals.cli.outputs import progress_bar
from repoanchor.evals.cli.perturb.catalogue import RECHECK_HELP
from repoanchor.perturb.transforms import TRANSFORMS, get_transform_class

err = Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the terminal's width


def list_transforms(as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False):
    """List the transformation ids, their family and what each does."""
    rows = []
    for tid in TRANSFORMS:
        cls = get_transform_class(tid)
        rows.append(
            {"id": tid, "family": cls.family, "keyword_bound": cls.keyword_bound, "description": cls.description}
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("id", "family", "keyword", "description")
    for row in rows:
        table.add_row(row["id"], row["family"], "yes" if row["keyword_bound"] else "", row["description"])
    Console().print(table)


def apply(
    src: Annotated[Path, typer.Argument(help="Source tree to transform (left untouched).")],
    out: Annotated[Path, typer.Argument(help="Where to write the variant; must not exist.")],
    transform: Annotated[
        list[str], typer.Option("--transform", "-t", help="Transform id; repeatable, applied in order.")
    ],
    fraction: Annotated[
        float, typer.Option(help="phi: share of candidate sites rewritten per file (1.0 = all).")
    ] = 0.7,
    file_fraction: Annotated[float, typer.Option(help="Probability that each file is selected, per transform.")] = 1.0,
    target: Annotated[
        list[str] | None, typer.Option(help="File (relative to SRC) always selected; repeatable.")
    ] = None,
    keyword: Annotated[list[str] | None, typer.Option(help="Keyword for keyword-bound transforms; repeatable.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for every random choice.")] = 0,
    metadata: Annotated[
        Path | None, typer.Option(help="Metadata JSON path, outside OUT [default: OUT.variant.json].")
    ] = None,
    include_tests: Annotated[bool, typer.Option(help="Also transform test files (never done by default).")] = False,
    include_build_files: Annotated[
        bool, typer.Option(help="Also transform build scripts (setup.py, docs/conf.py), generated and vendored files.")
    ] = False,
    workers: Annotated[int, typer.Option(help="Worker processes (0 = one per core).")] = 0,
    option: Annotated[
        list[str] | None,
        typer.Option(
            help="Tree-transform option ID.KEY=VALUE, e.g. proxy-imports.depth=6; repeatable. Give masking the "
            "command that will test the variant (runtime-target-masking.test_command='pytest --doctest-modules "
            "pkg'): a doctest collection there imports every module by its file, and masking then refuses."
        ),
    ] = None,
):
    """Write a transformed copy of SRC to OUT and its metadata beside it.

    Exit codes: 0 the variant is written and some site was rewritten; 1 written, but a pass failed on some file
    (rolled back there; each failure is listed); 2 bad input, nothing written; 3 written, but no site was
    rewritten anywhere (OUT equals SRC; the skip reasons are listed).

    Examples:

        repoanchor perturb apply src/ out/ -t proxy-imports -t constant-externalization --seed 1

        repoanchor perturb apply src/ out/ -t dead-method --keyword parse --fraction 1.0
    """
    from repoanchor.perturb.metadata import variant_metadata, write_metadata
    from repoanchor.perturb.results import Failed, nothing_rewritten, summarize
    from repoanchor.perturb.tree import ApplyConfig, apply_tree

    if not 0.0 < fraction <= 1.0 or not 0.0 <= file_fraction <= 1.0:
        raise typer.BadParameter("--fraction must be in (0, 1] and --file-fraction in [0, 1]")
    metadata = metadata or out.with_name(out.name + ".variant.json")
    if metadata.resolve().is_relative_to(out.resolve()):
        raise typer.BadParameter(f"metadata {metadata} must be outside OUT: it holds ground truth")
    refuse_absent(src, target, "--target")
    config = ApplyConfig(
        transforms=list(transform),
        fraction=fraction,
        file_fraction=file_fraction,
        targets=list(target or []),
        keywords=list(keyword or []),
        seed=seed,
        include_tests=include_tests,
        include_build=include_build_files,
        workers=workers,
        options=parse_options(option or []),
    )
    try:
        with progress_bar(err) as bar:
            task = bar.add_task("transforming", total=None)
            report = apply_tree(src, out, config, lambda done, total: bar.update(task, completed=done, total=total))
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    write_metadata(metadata, variant_metadata(src, config, report))
    typer.echo(
        json.dumps(
            {
                "out": str(out),
                "metadata": str(metadata),
                "files_changed": len(report.changed_files),
                "summary": summarize(report.outcomes),
            },
            indent=2,
        )
    )
    failed = [outcome for outcome in report.outcomes if isinstance(outcome, Failed)]
    for outcome in failed:
        last = [line for line in outcome.error.strip().splitlines() if line.strip()][-1:]
        err.print(
            f"[red]failed:[/red] {outcome.transform} on {outcome.file}: {''.join(last)}",
            highlight=False,
            soft_wrap=True,
        )
    unchanged = nothing_rewritten(report.outcomes)
    if unchanged:
        err.print(f"[yellow]warning:[/yellow] {out} is a copy of {src}: {unchanged}", highlight=False, soft_wrap=True)
    if failed or unchanged:
        raise typer.Exit(1 if failed else 3)


def validate(
    original: Annotated[Path, typer.Argument(help="The original tree.")],
    variant: Annotated[Path, typer.Argument(help="The transformed tree.")],
    test_cmd: Annotated[
        str,
        typer.Option(
            help="Test command run in each tree; `{junit}` marks where the junit XML "
            "path goes (added automatically for pytest)."
        ),
    ],
    repeat: Annotated[int, typer.Option(help="Baseline runs; tests whose outcome varies are flaky and excluded.")] = 1,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds allowed for one test run.")] = 1800,
    recheck: Annotated[bool, typer.Option(help=RECHECK_HELP)] = True,
):
    """Differential testing: identical per-test outcomes on both trees (exit 0), a changed outcome or a
    file that does not compile (exit 1), or no usable test run (exit 2)."""
    from repoanchor.perturb.validation.validate import validate as run_validation

    for tree in (original, variant):
        if not tree.is_dir():
            raise typer.BadParameter(f"{tree} is not a directory")
    try:
        report = run_validation(original, variant, test_cmd, repeat=repeat, timeout=timeout, recheck=recheck)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    typer.echo(report.to_json())
    raise typer.Exit(2 if report.infra_error else 0 if report.ok else 1)
