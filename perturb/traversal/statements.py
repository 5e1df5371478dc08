"""Small statements of one kind (every ``raise``, every ``assert``) with their ancestors, walking statements only.

A small statement lives in a statement line or suite, which lives in blocks and compound statements: expressions
never hold one, so the walk never enters them, and a module's asserts are found at a fraction of a full walk.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from repoanchor.perturb.traversal.walk import children

STATEMENT_LEVEL = (
    cst.Module,
    cst.IndentedBlock,
    cst.SimpleStatementLine,
    cst.SimpleStatementSuite,
    cst.BaseCompoundStatement,
    cst.Else,
    cst.Finally,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.MatchCase,
)
"""The nodes that hold statements (a function's and a class's body included, through their compound statement)."""


def small_statements(
    module: cst.Module, kind: type[cst.BaseSmallStatement]
) -> Iterator[tuple[cst.BaseSmallStatement, tuple[cst.CSTNode, ...]]]:
    """Each small statement of `kind` in `module`, with its ancestors from the module down."""
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(module, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, kind):
            yield node, path
            continue
        below = (*path, node)
        stack.extend((child, below) for child in children(node) if isinstance(child, (*STATEMENT_LEVEL, kind)))
