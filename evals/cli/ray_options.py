"""The option every command with `--executor ray` shares: where the Ray cluster is."""

from __future__ import annotations

from typing import Annotated

import typer

RayAddress = Annotated[
    str | None, typer.Option(help="Ray address (e.g. ray://head:10001 or auto); default: a local Ray instance.")
]
"""`address: RayAddress = None` in a command's signature; each command checks it goes with --executor ray."""
