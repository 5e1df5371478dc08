"""Parsed modules for parametrized differential tests: real files by name, inline texts by label and index."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import libcst as cst


def named_modules(paths: Iterable[Path], texts: Iterable[str], label: str) -> list[tuple[str, cst.Module]]:
    """(file name, module) for each path, then (f"{label}-{index}", module) for each text."""
    found = [(path.name, cst.parse_module(path.read_bytes())) for path in paths]
    return found + [(f"{label}-{index}", cst.parse_module(text)) for index, text in enumerate(texts)]


def module_id(value: object) -> str:
    """pytest ids for (name, module) parameters: the name, nothing for the module."""
    return value if isinstance(value, str) else ""
