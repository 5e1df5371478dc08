"""Files named relative to a source tree (--target, --gold-files) must be in it: a name that matches nothing
would otherwise leave the tree unchanged, or steer the sampler to nothing, and still exit 0."""

from __future__ import annotations

from pathlib import Path

import typer


def refuse_absent(src: Path, names: list[str] | list[Path] | None, option: str) -> None:
    """A usage error (exit 2, one line) naming the first of `names` that is not a file under `src`."""
    for name in names or []:
        if not (src / name).is_file():
            raise typer.BadParameter(f"{name} is not a file in {src}", param_hint=option)
