"""A matrix config's validation errors as lines a user can act on: the file, the field and, for a misspelt
field, the fields that would have been accepted there."""

from __future__ import annotations

import typing
from pathlib import Path

from pydantic import BaseModel


def error_line(path: Path, error: dict, root: type[BaseModel]) -> str:
    """One validation error; a whole-config check names its own field (`suites.0.repeats: ...`)."""
    where = ".".join(map(str, error["loc"]))
    if not where:
        return f"{path}: {error['msg'].removeprefix('Value error, ')}"
    valid = valid_fields(root, error["loc"][:-1]) if error["type"] == "extra_forbidden" else []
    return f"{path}: {where}: {error['msg']}" + (f" (valid: {', '.join(valid)})" if valid else "")


def valid_fields(root: type[BaseModel], loc: tuple) -> list[str]:
    """The fields of the model found at `loc` below `root` (list indexes and dict keys skipped); [] if unknown."""
    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return []
        candidates = [field.annotation, *typing.get_args(field.annotation)]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if model is None:
            return []
    return list(model.model_fields)
