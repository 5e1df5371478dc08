"""`repoanchor suite images`: one image per task, for harnesses that run SWE-bench's images by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def images(
    suite: Annotated[Path, typer.Argument(help="A suite folder written by `suite build`.")],
    out: Annotated[Path | None, typer.Option(help="Where {task id: image} goes (default SUITE.images.json).")] = None,
    template: Annotated[
        str, typer.Option(help="Image name; {instance_id} mangled as SWE-bench does (__ as _1776_), {tag} a digest.")
    ] = "repoanchor/sweb.eval.x86_64.{instance_id}:{tag}",
) -> None:
    """Bake one image per task: its environment image with the task's tree at /testbed, installed.

    For harnesses that run SWE-bench images by name. Needs the environment images (`repoanchor images
    build DATASET`). The suite folder is not changed; the mapping goes to OUT. Exit 1 if any task failed.
    """
    from rich.progress import track

    from repoanchor.evals.harness.suite_format import read_suite_tasks
    from repoanchor.evals.images.task_images import bake_task_image

    rows = read_suite_tasks(suite)
    records = [bake_task_image(suite, row, template) for row in track(rows, description="task images", transient=True)]
    for record in records:
        typer.echo(f"{record.task_id}\t{record.image or 'FAILED: ' + str(record.error)}", err=record.image is None)
    target = out or suite.with_name(suite.name + ".images.json")
    target.write_text(json.dumps({r.task_id: r.model_dump() for r in records}, indent=1) + "\n", encoding="utf-8")
    raise typer.Exit(1 if any(r.image is None for r in records) else 0)
