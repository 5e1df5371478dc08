"""`repoanchor images build`: the environment image of every (repo, version) of a dataset, built here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console

from repoanchor.evals.cli.outputs import progress_bar
from repoanchor.evals.cli.ray_options import RayAddress

app = typer.Typer(help="Environment images: the task's Python and dependencies, in a local Docker engine.",
                  no_args_is_help=True)  # fmt: skip
err = Console(stderr=True)
DEFAULT_CACHE = Path.home() / ".cache" / "repoanchor"


@app.command()
def build(
    dataset: Annotated[str, typer.Argument(help="SWE-bench-format dataset: parquet, JSONL, JSON, folder or HF id.")],
    instances: Annotated[
        list[str] | None,
        typer.Option("--instances", "-i", help="Only these instance ids: 'a,b' or the option repeated."),
    ] = None,
    repo_cache: Annotated[
        Path | None,
        typer.Option("--repo-cache", envvar="REPOANCHOR_REPO_CACHE", help="Folder of git clones named owner__name."),
    ] = None,
    cache_dir: Annotated[
        Path,
        typer.Option(
            help="Cache of the host venvs (venvs/) and wheelhouses (wheels/) images are made from; the venvs' "
            "unpinned dependencies resolve as of the environment_setup_commit's date (REPOANCHOR_DEPS_AS_OF=none|DATE)."
        ),
    ] = DEFAULT_CACHE,
    out: Annotated[Path | None, typer.Option(help="Write the records (one per image) to this JSON file.")] = None,
    executor: Annotated[
        Literal["local", "ray"],
        typer.Option(help="local (built here, one by one) or ray (each image built on a node, with its engine)."),
    ] = "local",
    address: RayAddress = None,
    node_cache: Annotated[
        str | None,
        typer.Option(
            help="With ray: the nodes' wheelhouse cache, a folder on each node (default ~/.cache/repoanchor "
            "there); --cache-dir then holds only this machine's planning venvs."
        ),
    ] = None,
) -> None:
    """Build one image per (repo, version): the spec's Python and pinned dependencies on the local base image.

    Dependencies are fetched on the host with pip into a wheelhouse (the same pins as the local provider's
    venv) and installed in a build with no network. Where the spec's Python is not installed here, the image
    uses this one and says so (labels, records). Images are tagged by a digest of their inputs: an unchanged
    (repo, version) is found, not rebuilt. A failing group is reported and the others go on; exit 1 if any
    failed. Grades and `suite validate --provider image` then find the images by their labels.

    With --executor ray each (repo, version) is planned here (the local provider's venv, the clone) and built on a
    node with the node's own Python, wheelhouse cache (--node-cache) and Docker engine: the same inputs give the
    same tag there, found rather than rebuilt; the records and output are written here alone.
    """
    from repoanchor.evals.harness.datasets import load_dataset
    from repoanchor.evals.images.build import build_group, groups

    if executor != "ray" and (address or node_cache):
        raise typer.BadParameter("--address and --node-cache are for --executor ray", param_hint="--executor")

    loaded = load_dataset(dataset)
    for error in loaded.errors:
        err.print(f"[yellow]skipped[/] {error}")
    wanted = {part.strip() for value in instances or [] for part in value.split(",") if part.strip()}
    rows = [row for row in loaded.rows if not wanted or row["instance_id"] in wanted]
    unknown = sorted(wanted - {row["instance_id"] for row in loaded.rows})
    if unknown:
        raise typer.BadParameter(f"not in {dataset}: {', '.join(unknown)}", param_hint="--instances")
    records = []
    with progress_bar(err) as progress:
        task = progress.add_task("images", total=len(groups(rows)))

        def each(record) -> None:
            records.append(record)
            _report(record)
            progress.advance(task)

        if executor == "ray":
            from repoanchor.evals.runs.images_ray import build_groups_on_ray

            progress.update(task, description="images on ray")
            records[:] = build_groups_on_ray(groups(rows), repo_cache, Path(cache_dir), address, node_cache, each=each)
        for key, group in groups(rows).items() if executor == "local" else ():
            progress.update(task, description=f"{key[0]} {key[1]}")
            each(build_group(key, group, repo_cache, Path(cache_dir)))
    if out:
        out.write_text(json.dumps([r.model_dump() for r in records], indent=1) + "\n", encoding="utf-8")
    raise typer.Exit(1 if any(r.status == "failed" for r in records) else 0)


def _report(record) -> None:
    where = f"{record.repo} {record.version}"
    if record.status == "failed":
        err.print(f"[red]failed[/] {where}: {record.error}")
        return
    note = f" [yellow](wanted Python {record.python_wanted}: {record.fallback})[/]" if record.fallback else ""
    err.print(f"[green]{record.status}[/] {where} -> {record.image} (Python {record.python_used}, "
              f"{record.seconds:.0f}s){note}")  # fmt: skip
    typer.echo(record.image)
