"""Options that name things: files relative to a source tree (--target, --gold-files) must be in it (a name that
matches nothing would otherwise leave the tree unchanged, or steer the sampler to nothing, and still exit 0), and
transform options are ID.KEY=VALUE."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def refuse_absent(src: Path, names: list[str] | list[Path] | None, option: str) -> None:
    """A usage error (exit 2, one line) naming the first of `names` that is not a file under `src`."""
    for name in names or []:
        if not (src / name).is_file():
            raise typer.BadParameter(f"{name} is not a file in {src}", param_hint=option)


def parse_options(items: list[str]) -> dict[str, dict]:
    """`ID.KEY=VALUE` strings -> {ID: {KEY: value}}; values are read as JSON when they parse."""
    options: dict[str, dict] = {}
    for item in items:
        head, sep, raw = item.partition("=")
        tid, dot, key = head.partition(".")
        if not (sep and dot and tid and key):
            raise typer.BadParameter(f"--option {item!r} is not ID.KEY=VALUE")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        options.setdefault(tid, {})[key] = value
    return options
