"""dead-code: an ``if <opaque false predicate>:`` guarding a throwaway assignment is inserted.

A site is an indented block (the body of a def, class, if/elif/else, for, while, with,
try/except/finally or case) spanning 1-100 lines from its first statement to its last. The
dead statement goes before the block's first statement after a leading docstring, which
stays the ``__doc__``. Its shape varies with the pass RNG::

    if <false>:            if <false>:            if <false>:
        name = 12              name = 12              name = other = 12
                               name += 3

The predicate (`_predicates.opaque`) always evaluates to False, so the assignment never runs:
no local is ever bound (``locals()`` is unchanged), and in a class body no attribute (no
Enum member, no dataclass field) appears. Each name is drawn fresh per site, free in the
whole file, so no read of an existing name can turn into a read of a new local. Only
assignments are inserted, never ``yield``/``await``/``return``, so a function's
generator/coroutine nature and its control flow are untouched; no annotation is used,
since an annotated assignment would give a class body an ``__annotations__`` dict.

Refused, and reported:
- a block that is only a docstring: there is no first statement to insert before.
- a block whose first statement is ``from __future__``: nothing may precede it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.naming import fresh_name, identifiers_in
from repoanchor.perturb.sites import Site, SiteCollector
from repoanchor.perturb.transforms._common import docstring_count
from repoanchor.perturb.transforms._predicates import opaque

MIN_LINES, MAX_LINES = 1, 100
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
            self.ctx.skip("docstring only: no statement to insert before", self.label(node))
        elif m.matches(rest[0], FUTURE_IMPORT):
            self.ctx.skip("future import: nothing may precede it", self.label(node))
        else:
            self.add(node)


def _dead_statement(rng: random.Random, taken: set[str]) -> cst.If:
    name = fresh_name(rng, taken)
    value = cst.Integer(str(rng.randint(0, 99)))
    shape = rng.randrange(3)
    if shape == 2:
        targets = [cst.AssignTarget(cst.Name(name)), cst.AssignTarget(cst.Name(fresh_name(rng, taken)))]
        lines = [cst.Assign(targets, value)]
    else:
        lines = [cst.Assign([cst.AssignTarget(cst.Name(name))], value)]
    if shape == 1:
        lines.append(cst.AugAssign(cst.Name(name), cst.AddAssign(), cst.Integer(str(rng.randint(1, 9)))))
    body = cst.IndentedBlock([cst.SimpleStatementLine([small]) for small in lines])
    return cst.If(opaque(rng, False), body)


class _Inserter(cst.CSTTransformer):
    def __init__(self, sites: Sequence[Site], ctx: FileContext) -> None:
        super().__init__()
        self.sites = {id(site.node): site for site in sites}
        self.ctx = ctx
        self.taken = identifiers_in(ctx.code)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        site = self.sites.get(id(original_node))
        if site is None:
            return updated_node
        keep = docstring_count(updated_node.body)
        first = updated_node.body[keep]
        dead = _dead_statement(self.ctx.rng, self.taken).with_changes(leading_lines=first.leading_lines)
        body = [*updated_node.body[:keep], dead, first.with_changes(leading_lines=()), *updated_node.body[keep + 1 :]]
        new_node = updated_node.with_changes(body=body)
        self.ctx.changed(site, original_node, new_node)
        return new_node


class DeadCode:
    id = "dead-code"
    family = "spt"
    description = "Insert an assignment guarded by an always-false opaque predicate at the top of a block."
    keyword_bound = False

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        collector = _Collector(ctx)
        ctx.metadata_wrapper(module).visit(collector)
        return collector.sites

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: FileContext) -> cst.Module:
        return module.visit(_Inserter(sites, ctx))
