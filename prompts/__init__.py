"""Prompt templates (jinja2, StrictUndefined), shipped as package data and selected by name.

`render("mini_system")` renders `prompts/mini_system.j2`. A missing variable is an error, never an
empty string, so a template and its caller cannot drift apart silently. A user template is any
path ending in `.j2`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

HERE = Path(__file__).parent


@cache
def _environment(folder: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # prompts are plain text, not HTML
    )


def template_path(name: str) -> Path:
    """A shipped template by name ("mini_system"), or a user's template by path ("my/hint.j2")."""
    if name.endswith(".j2"):
        path = Path(name)
    else:
        path = HERE / f"{name}.j2"
    if not path.is_file():
        shipped = ", ".join(sorted(p.stem for p in HERE.glob("*.j2")))
        raise FileNotFoundError(f"no prompt template {name!r} (shipped: {shipped})")
    return path.resolve()


def render(name: str, **variables) -> str:
    path = template_path(name)
    return _environment(str(path.parent)).get_template(path.name).render(**variables)


def available() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.j2"))
