"""Parsed modules for parametrized differential tests: real files by name, inline texts by label and index."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import libcst as cst

from repoanchor.perturb.speed.codegen import MarkingState, emitting


def repository_sources() -> list[Path]:
    """This repository's own perturb/ modules and the transforms' test cases: real Python of every shape."""
    root = Path(__file__).parents[2]
    return sorted((root / "perturb").rglob("*.py")) + sorted((root / "tests" / "perturb" / "cases").rglob("*.py"))


def named_modules(paths: Iterable[Path], texts: Iterable[str], label: str) -> list[tuple[str, cst.Module]]:
    """(file name, module) for each path, then (f"{label}-{index}", module) for each text."""
    found = [(path.name, cst.parse_module(path.read_bytes())) for path in paths]
    return found + [(f"{label}-{index}", cst.parse_module(text)) for index, text in enumerate(texts)]


def module_id(value: object) -> str:
    """pytest ids for (name, module) parameters: the name, nothing for the module."""
    return value if isinstance(value, str) else ""


def node_spans(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> tuple[str, dict[int, tuple[int, int]]]:
    """The module's text and id(node) -> (start, end) character offsets of each of `nodes` in it.

    Spans are syntactic, as in Python's ast: a node's own parentheses are excluded. It costs
    one plain codegen; `PositionProvider` costs about fifteen on large files, because it tracks
    line and column on every token of every node. Offsets refer to the returned text, which can
    differ from the file's (LibCST drops a form feed at the start of a line).
    """
    state = MarkingState(
        {id(node): None for node in nodes}, default_indent=module.default_indent, default_newline=module.default_newline
    )
    with emitting():
        module._codegen(state)
    return state.text_and_spans(list(state.spans))
