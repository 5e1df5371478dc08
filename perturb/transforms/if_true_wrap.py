"""if-true-wrap: the statements of a block are wrapped in ``if <opaque predicate>:``.

A site is an indented block (the body of a def, class, if/elif/else, for, while, with,
try/except/finally or case) spanning 5-100 lines from its first statement to its last
(comments above the first statement and its decorators are not counted). The predicate is
drawn from the pass RNG by `_predicates.opaque` and always evaluates to True, so the
wrapped statements run exactly as before: an ``if`` opens no scope, so bindings,
``global``/``nonlocal``, ``yield`` and ``return`` mean what they meant, and class-body names
still become class attributes.

A leading docstring stays first, outside the ``if``: inside it would no longer be the
``__doc__``. (The prior implementation compared coordinates and so never wrapped a block
with a docstring.) Comments above the first wrapped statement move above the ``if``.

Refused, and reported:
- a block that is only a docstring: there is nothing to wrap.
- a block whose statements after the docstring include ``from __future__``: such an import
  is only valid at the top of a module (defensive: a block holding one does not compile).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, rewrite_sites
from repoanchor.perturb.transforms._common import block_line_counts, docstring_count
from repoanchor.perturb.transforms._predicates import opaque

MIN_LINES, MAX_LINES = 5, 100
FUTURE_IMPORT = m.SimpleStatementLine([m.ZeroOrMore(), m.ImportFrom(module=m.Name("__future__")), m.ZeroOrMore()])


class _Collector(SiteCollector):
    WALK = "statements"  # only statements are sites: never descend into expressions

    def __init__(self, ctx: FileContext, module: cst.Module) -> None:
        super().__init__()
        self.ctx = ctx
        self.lines = block_line_counts(module)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if not MIN_LINES <= self.lines[id(node)] <= MAX_LINES:
            return
        rest = node.body[docstring_count(node.body) :]
        if not rest:
            self.ctx.skip("docstring only: nothing to wrap after the docstring", self.label(node))
        elif any(m.matches(stmt, FUTURE_IMPORT) for stmt in rest):
            self.ctx.skip("future import: must stay at the top level of its module", self.label(node))
        else:
            self.add(node)


def _wrapper(ctx: FileContext):
    def wrap(site: Site, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        keep = docstring_count(updated.body)
        first, *others = updated.body[keep:]
        block = cst.IndentedBlock([first.with_changes(leading_lines=()), *others])
        wrapped = cst.If(opaque(ctx.rng, True), block, leading_lines=first.leading_lines)
        return updated.with_changes(body=[*updated.body[:keep], wrapped])

    return wrap


class IfTrueWrap:
    id = "if-true-wrap"
    family = "spt"
    description = "Wrap a 5-100 line block (after its docstring) in an if on an always-true opaque predicate."
    keyword_bound = False

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        return _Collector(ctx, module).collect(module)

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: FileContext) -> cst.Module:
        return rewrite_sites(module, sites, ctx, _wrapper(ctx))
