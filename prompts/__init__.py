"""Prompt templates (jinja2, StrictUndefined), shipped as package data and selected by name.

`render("mini_system")` renders `prompts/mini_system.j2`. A missing variable is an error, never an
empty string, so a template and its caller cannot drift apart silently. A user template is any
existing file path.
"""

from __future__ import annotations

import hashlib
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
        trim_blocks=True,  # a block tag's own line break is not part of the prompt
        lstrip_blocks=True,
        autoescape=False,  # prompts are plain text, not HTML
    )


@cache
def _environment_without_files() -> jinja2.Environment:
    """As `_environment`, for a template given as text: it can include nothing."""
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True
    )


def template_path(name: str) -> Path:
    """A user's template by path ("my/hint.j2", any existing file), else a shipped one by name ("mini_system")."""
    path = Path(name) if Path(name).is_file() else HERE / f"{name}.j2"
    if not path.is_file():
        shipped = ", ".join(sorted(p.stem for p in HERE.glob("*.j2")))
        raise FileNotFoundError(f"no prompt template {name!r} (shipped: {shipped})")
    return path.resolve()


def render(name: str, **variables) -> str:
    path = template_path(name)
    return _environment(str(path.parent)).get_template(path.name).render(**variables)


def available() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.j2"))


HINT_VARIANTS = ("none", "structural")


def hints(variant: str = "none", hints_file: str | None = None, text: str | None = None) -> str:
    """The hint section's text: a shipped variant by name, or a user's template file (rendered strictly).

    `text`: the user template's content, read elsewhere (a Ray node cannot read the driver's `hints_file`)."""
    if text is not None:
        return _environment_without_files().from_string(text).render().strip()
    if hints_file is not None:
        if not Path(hints_file).is_file():
            raise FileNotFoundError(f"hints file {str(hints_file)!r} does not exist")
        return render(str(hints_file)).strip()
    if variant not in HINT_VARIANTS:
        raise ValueError(f"unknown hint variant {variant!r}; choose one of {HINT_VARIANTS} or pass a hints file")
    return render(f"hints/{variant}").strip()


def prompt_version(*names: str) -> str:
    """A short content hash of the named templates: cached stage-1 results are keyed by it."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(template_path(name).read_bytes())
    return digest.hexdigest()[:16]
