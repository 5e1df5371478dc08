"""if-true-wrap: the statements of a block are wrapped in ``if <opaque predicate>:``.

A site is an indented block (the body of a def, class, if/elif/else, for, while, with,
try/except/finally or case) spanning 5-100 lines from its first statement to its last. The
predicate is drawn from the pass RNG by `_predicates.opaque` and always evaluates to True,
so the wrapped statements run exactly as before: an ``if`` opens no scope, so bindings,
``global``/``nonlocal``, ``yield`` and ``return`` mean what they meant, and class-body names
still become class attributes.

A leading docstring stays first, outside the ``if``: inside it would no longer be the
``__doc__``. (The prior implementation compared coordinates and so never wrapped a block
with a docstring.) Comments above the first wrapped statement move above the ``if``.

Refused, and reported:
- a block that is only a docstring: there is nothing to wrap.
- a block whose statements after the docstring include ``from __future__``: such an import
  must stay at the top of its module; wrapping would make it a syntax error.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector
from repoanchor.perturb.transforms._common import docstring_count
from repoanchor.perturb.transforms._predicates import opaque

MIN_LINES, MAX_LINES = 5, 100
FUTURE_IMPORT = m.SimpleStatementLine([m.ZeroOrMore(), m.ImportFrom(module=m.Name("__future__")), m.ZeroOrMore()])


class _Collector(SiteCollector):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        first = self.get_metadata(PositionProvider, node.body[0]).start.line
        last = self.get_metadata(PositionProvider, node.body[-1]).end.line
        if not MIN_LINES <= last - first + 1 <= MAX_LINES:
            return
        rest = node.body[docstring_count(node.body) :]
        if not rest:
            self.ctx.skip("docstring only: nothing to wrap after the docstring", self.label(node))
        elif any(m.matches(stmt, FUTURE_IMPORT) for stmt in rest):
            self.ctx.skip("future import: must stay at the top level of its module", self.label(node))
        else:
            self.add(node)


class _Wrapper(cst.CSTTransformer):
    def __init__(self, sites: Sequence[Site], ctx: FileContext) -> None:
        super().__init__()
        self.sites = {id(site.node): site for site in sites}
        self.ctx = ctx

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        site = self.sites.get(id(original_node))
        if site is None:
            return updated_node
        keep = docstring_count(updated_node.body)
        first, *others = updated_node.body[keep:]
        wrapped = cst.If(
            opaque(self.ctx.rng, True),
            cst.IndentedBlock([first.with_changes(leading_lines=()), *others]),
            leading_lines=first.leading_lines,
        )
        new_node = updated_node.with_changes(body=[*updated_node.body[:keep], wrapped])
        self.ctx.changed(site, original_node, new_node)
        return new_node


class IfTrueWrap:
    id = "if-true-wrap"
    family = "spt"
    description = "Wrap a 5-100 line block (after its docstring) in an if on an always-true opaque predicate."
    keyword_bound = False

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        collector = _Collector(ctx)
        ctx.metadata_wrapper(module).visit(collector)
        return collector.sites

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: FileContext) -> cst.Module:
        return module.visit(_Wrapper(sites, ctx))
