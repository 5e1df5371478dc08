"""What a command leaves: output folders (never overwritten unless asked to with --force) and progress bars."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

Force = Annotated[bool, typer.Option("--force", help="Overwrite --out when it already holds files.")]
"""The shared option: `force: Force = False` in a command's signature."""


def refuse_overwrite(out: Path, force: bool, option: str = "--out") -> None:
    """A usage error (exit 2, one line) when `out` holds anything and --force was not given.

    Checked before any work, so a refused command leaves the earlier result exactly as it was."""
    if force or not out.exists():
        return
    if out.is_dir() and not any(out.iterdir()):
        return  # an empty folder holds no result to lose
    raise typer.BadParameter(
        f"{out} already exists; give --force to overwrite it, or another {option}", param_hint=option
    )


def progress_bar(console: Console) -> Progress:
    """The commands' one progress bar (what, a bar, done of total, time so far) on `console`; gone when done."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=console, transient=True)
