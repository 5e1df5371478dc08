"""Expressions whose code is known when they are made: an emission of the file writes that code, not the nodes.

An opaque predicate (`transforms/_predicates.py`) is a hundred LibCST nodes (operators, parentheses, whitespace)
built for one site; dead-code puts one on nearly every block of a file, and every emission of the statement
holding it (the site's snippet, the file's output) walked all of them again. Its builder knows its code as it
builds it, so it registers the two (`prerender`) while a file's emissions are held (`held`, by the engine), and a
reusing emission (`emission.FileEmission`) writes the registered code in one token. A node is matched by
identity and kept alive by its entry (no other node can take its id); a rewritten predicate is a new node and is
emitted as usual. Emissions that mark expressions' spans never use an entry, and the registry empties when the
file's emissions end, so nothing outlives the file; built outside `held`, a predicate registers nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.base import CSTNode

ROOTS = (cst.UnaryOperation, cst.BooleanOperation, cst.BinaryOperation, cst.Comparison)
"""The kinds of node a registered expression may be: `_codegen` of these classes looks entries up."""

_REGISTERED: dict[int, tuple[cst.CSTNode, str]] = {}
_held = 0
_lock = threading.Lock()  # files transformed on two threads at once share the count


@contextmanager
def held() -> Iterator[None]:
    """Registration is open inside (re-entrant, in any thread); the registry empties as the last block ends."""
    global _held
    with _lock:
        _held += 1
    try:
        yield
    finally:
        with _lock:
            _held -= 1
            if not _held:
                _REGISTERED.clear()


def prerender(node: cst.BaseExpression, code: str) -> cst.BaseExpression:
    """`node`, whose code (`code_for_node`, any indentation: it holds no newline) is `code`, registered as such."""
    if _held and type(node) in ROOTS:
        _REGISTERED[id(node)] = (node, code)
    return node


def prerendered_codegen(self: CSTNode, state, **kwargs) -> None:
    """`_codegen` of the `ROOTS` classes inside a reusing emission: the registered code where there is some."""
    entry = _REGISTERED.get(id(self)) if getattr(state, "writes_prerendered", False) else None
    if entry is not None and entry[0] is self:
        state.add_token(entry[1])
    else:
        CSTNode._codegen(self, state, **kwargs)
