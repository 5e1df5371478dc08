"""Parsing a file with LibCST, without validating each node the parser makes.

LibCST's native parser builds every node through its Python constructor, whose `__post_init__` validates the
node (parentheses paired, whitespace wherever tokens would run together...): a tenth of a parse. A tree read
from source text needs none of it, since its code is that text, so `parse_source` suspends the check while
the parser runs. Nodes made anywhere else (a transform's, LibCST's own `with_changes`) are validated as always:
the swap is undone as the parse ends, and the parser raises what it raised.
"""

from __future__ import annotations

import libcst as cst
from libcst._nodes.base import CSTNode

from repoanchor.perturb.speed.patching import ClassPatch


def _unchecked(self: CSTNode) -> None:
    """A parsed node is valid as made: its code is the source's own."""


_PARSED_UNCHECKED = ClassPatch((CSTNode, "__post_init__", _unchecked))


def parse_source(source: bytes | str) -> cst.Module:
    """`cst.parse_module(source)`, each parsed node left unvalidated (see the module docstring)."""
    with _PARSED_UNCHECKED.applied():
        return cst.parse_module(source)
