"""Emitting LibCST trees without position bookkeeping: the text of `Module.code`, for less.

LibCST's `CodegenState` opens a generator-based context manager around every node it emits, only
so that `PositionProvider` can subclass it and record where each node starts and ends. Plain
emission never reads those positions, yet pays for the generator on every node: `PlainState`
makes the hook one shared no-op context. Every expression also opens a generator-based context for
its parentheses (`_parenthesize`), although most have none: inside `emitting()` an expression without
parentheses hands back the state's position context itself (the same enter and exit, for any state), and one
with parentheses a small context object doing what the generator did. The tokens, and so the text, are LibCST's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import nullcontext
from itertools import accumulate

import libcst as cst
from libcst._nodes.expression import _BaseParenthesizedNode
from libcst._nodes.internal import CodegenState

from repoanchor.perturb.speed.patching import ClassPatch

_NO_POSITIONS = nullcontext()
_DEFAULT = cst.Module(body=[])


def _parenthesize(self, state: CodegenState):
    """LibCST's `_parenthesize`, which with no parentheses to emit is exactly its position context."""
    if not self.lpar and not self.rpar:
        return state.record_syntactic_position(self)
    return _Parenthesized(self, state)


class _Parenthesized:
    """LibCST's `_parenthesize` for a node with parentheses, without a generator: the left ones, the position
    context around the node's own tokens, the right ones (not after an error, as there)."""

    __slots__ = ("node", "state", "position")

    def __init__(self, node, state: CodegenState) -> None:
        self.node, self.state = node, state

    def __enter__(self) -> None:
        for lpar in self.node.lpar:
            lpar._codegen(self.state)
        self.position = self.state.record_syntactic_position(self.node)
        self.position.__enter__()

    def __exit__(self, kind, value, traceback) -> bool:
        self.position.__exit__(kind, value, traceback)
        if kind is None:
            for rpar in self.node.rpar:
                rpar._codegen(self.state)
        return False


_EMITTING = ClassPatch((_BaseParenthesizedNode, "_parenthesize", _parenthesize))


def emitting():
    """Within this block (any thread), expressions without parentheses skip LibCST's generator context."""
    return _EMITTING.applied()


class PlainState(CodegenState):
    """LibCST's codegen state with its position hook reduced to a shared no-op context."""

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _NO_POSITIONS


class TokenSpan:
    """Token indices around one node's syntactic position, stored as `spans[key]` when it closes."""

    def __init__(self, tokens: list[str], spans: dict, key: int) -> None:
        self.tokens, self.spans, self.key = tokens, spans, key

    def __enter__(self) -> None:
        self.start = len(self.tokens)

    def __exit__(self, *exc: object) -> None:
        self.spans[self.key] = (self.start, len(self.tokens))


class MarkingState(PlainState):
    """A plain emission that marks the token span of each node whose id is a key of `spans` (the last span
    recorded wins), and leaves the file's dropped last newline to `text()`, so marked indices stay valid."""

    def __init__(self, spans: dict[int, tuple[int, int] | None] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.spans = {} if spans is None else spans
        self.popped = False

    def record_syntactic_position(self, node, **kwargs):
        # Called for every node: the shared no-op context directly for the unmarked ones.
        return TokenSpan(self.tokens, self.spans, id(node)) if id(node) in self.spans else _NO_POSITIONS

    def pop_trailing_newline(self) -> None:
        self.popped = True  # applied by `text`

    def text(self) -> str:
        return "".join(self.tokens[:-1] if self.popped and self.tokens else self.tokens)

    def text_and_spans(self, keys: Iterable[int]) -> tuple[str, dict[int, tuple[int, int]]]:
        """The emitted text, and the character span of each of `keys` that was marked."""
        offsets = list(accumulate(map(len, self.tokens), initial=0))
        text = self.text()  # a span that ends the file may hold the dropped newline's token: clipped to the text
        marked = ((key, self.spans.get(key)) for key in keys)
        return text, {key: (offsets[span[0]], min(offsets[span[1]], len(text))) for key, span in marked if span}


def code_for_node(node: cst.CSTNode, module: cst.Module = _DEFAULT) -> str:
    """`module.code_for_node(node)`: `node`'s code with `module`'s indentation and newline."""
    state = PlainState(default_indent=module.default_indent, default_newline=module.default_newline)
    with emitting():
        node._codegen(state)
    return "".join(state.tokens)


def module_code(module: cst.Module) -> str:
    """`module.code`."""
    return code_for_node(module, module)
