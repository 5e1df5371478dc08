"""Emitting LibCST trees without position bookkeeping: the text of `Module.code`, for less.

LibCST's `CodegenState` opens a generator-based context manager around every node it emits, only
so that `PositionProvider` can subclass it and record where each node starts and ends. Plain
emission never reads those positions, yet pays for the generator on every node: `PlainState`
makes the hook one shared no-op context. The tokens, and so the text, are LibCST's own.
"""

from __future__ import annotations

from contextlib import nullcontext

import libcst as cst
from libcst._nodes.internal import CodegenState

_NO_POSITIONS = nullcontext()
_DEFAULT = cst.Module(body=[])


class PlainState(CodegenState):
    """LibCST's codegen state with its position hook reduced to a shared no-op context."""

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _NO_POSITIONS


def code_for_node(node: cst.CSTNode, module: cst.Module = _DEFAULT) -> str:
    """`module.code_for_node(node)`: `node`'s code with `module`'s indentation and newline."""
    state = PlainState(default_indent=module.default_indent, default_newline=module.default_newline)
    node._codegen(state)
    return "".join(state.tokens)


def module_code(module: cst.Module) -> str:
    """`module.code`."""
    return code_for_node(module, module)


def module_bytes(module: cst.Module) -> bytes:
    """`module.bytes`: its code in its own encoding."""
    return module_code(module).encode(module.encoding)
