"""The block sites shared by dead-code, if-true-wrap and try-reraise-wrap.

A site is an indented block spanning a range of lines from its first statement to its last
(comments above the first statement and its decorators are not counted). A leading docstring
always stays first: moved into a wrapper it would no longer be the ``__doc__``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

import libcst as cst

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, SiteTransform
from repoanchor.perturb.transform_checks import docstring_count


def future_import(statement: cst.BaseStatement) -> bool:
    """A line holding ``from __future__ import ...`` (tested directly: a matcher costs more than the walk around it)."""
    return type(statement) is cst.SimpleStatementLine and any(
        type(small) is cst.ImportFrom and type(small.module) is cst.Name and small.module.value == "__future__"
        for small in statement.body
    )


class BlockCollector(SiteCollector):
    """Blocks of `min_lines`..`max_lines` lines; `wraps` says the rewrite wraps the statements.

    A wrapper needs statements after the docstring and may not move a ``from __future__``
    import anywhere; an insertion only may not land before one.
    """

    WALK = "statements"  # only statements are sites: never descend into expressions

    def __init__(self, ctx: FileContext, module: cst.Module, *, lines: tuple[int, int], wraps: bool) -> None:
        super().__init__()
        self.ctx = ctx
        text, self.lines = ctx.emission.block_lines(module)
        ctx.remember_code(module, text)
        self.min_lines, self.max_lines = lines
        self.wraps = wraps

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if not self.min_lines <= self.lines[id(node)] <= self.max_lines:
            return
        rest = node.body[docstring_count(node.body) :]
        if self.wraps and not rest:
            self.ctx.skip("docstring only: nothing to wrap after the docstring", self.label(node))
        elif self.wraps and any(future_import(stmt) for stmt in rest):
            self.ctx.skip("future import: must stay at the top level of its module", self.label(node))
        elif not self.wraps and rest and future_import(rest[0]):
            self.ctx.skip("future import: nothing may precede it", self.label(node))
        else:
            self.add(node)


class BlockTransform(SiteTransform):
    """A block SPT: its sites are indented blocks of `lines` (fewest, most) lines, and `wraps` says the block
    is wrapped (its docstring stays outside) rather than given a statement at its top."""

    lines: ClassVar[tuple[int, int]] = (5, 100)
    wraps: ClassVar[bool] = True
    nests = True  # a wrapper, or an inserted `if`, is one more block

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        return BlockCollector(ctx, module, lines=self.lines, wraps=self.wraps).collect(module)


def wrap_after_docstring(
    block: cst.IndentedBlock,
    make: Callable[[cst.IndentedBlock, Sequence[cst.EmptyLine]], cst.BaseCompoundStatement],
) -> cst.IndentedBlock:
    """Put the block's statements after its docstring into `make(inner, leading_lines)`.

    Comments above the first wrapped statement move above the wrapper.
    """
    keep = docstring_count(block.body)
    first, *others = block.body[keep:]
    inner = cst.IndentedBlock([first.with_changes(leading_lines=()), *others])
    return block.with_changes(body=[*block.body[:keep], make(inner, first.leading_lines)])
