"""comparison-swap: ``a < b`` becomes ``b > a`` (and <=, >, >= likewise).

Only single-operator comparisons whose operands cannot run code with visible side effects
when evaluated (names, attribute chains, literals and arithmetic over them): swapping the
operands swaps their evaluation order, so a call on either side is refused.

``a < b`` calls ``a.__lt__(b)`` and ``b > a`` calls ``b.__gt__(a)``: for types whose comparisons build
objects (symbolic expressions, arrays, query builders) the two differ (``StrictLessThan(-oo, x)`` vs
``StrictGreaterThan(x, -oo)``). So a site is kept only where the result is the same call either way:
- [literal] one operand is a number or string literal: a builtin's comparison with a foreign object
  returns NotImplemented, and Python then makes exactly the other operand's call (a subclass of the
  builtin is asked first in both spellings), so ``x < 0`` and ``0 > x`` both call ``x.__lt__(0)``;
- [proven numbers] otherwise astroid must prove both operands builtin numbers, as operand-permute does
  (an uninferable operand, a parameter for instance, is refused: "rich comparison"); a site whose operands the
  file's bindings already rule out is refused before astroid builds the file (`proofs/unprovable.py`).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from astroid import nodes as an

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.proofs.bindings_seen import BindingsCollector
from repoanchor.perturb.proofs.builtin_numbers import NUMERIC, Refused, astroid_sites, forget_inference, number_types
from repoanchor.perturb.proofs.unprovable import unprovable_sites
from repoanchor.perturb.sites import Site, SiteTransform
from repoanchor.perturb.traversal.walk import nodes_within

MIRROR = {
    cst.LessThan: cst.GreaterThan,
    cst.GreaterThan: cst.LessThan,
    cst.LessThanEqual: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThanEqual,
}
SIDE_EFFECT_FREE = (
    cst.Name,
    cst.Attribute,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.UnaryOperation,
    cst.BinaryOperation,
    cst.Subscript,
)
EFFECTFUL = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda, cst.GeneratorExp)
NUMBER = m.Integer() | m.Float() | m.Imaginary()
LITERAL = NUMBER | m.SimpleString() | m.ConcatenatedString() | m.UnaryOperation(m.Minus() | m.Plus(), NUMBER)


def _pure(node: cst.BaseExpression) -> bool:
    return type(node) in SIDE_EFFECT_FREE and next(nodes_within(node, EFFECTFUL), None) is None


class _Collector(BindingsCollector):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.seen = 0
        """Comparisons met so far, sites or not: a site's rank maps it to astroid's node."""

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.seen += 1
        if len(node.comparisons) != 1 or type(node.comparisons[0].operator) not in MIRROR:
            return
        if _pure(node.left) and _pure(node.comparisons[0].comparator):
            self.add(node, order=self.seen - 1)
        else:
            self.ctx.skip("effectful operand: swapping would reorder side effects", self.label(node))


def _swap(site: Site, original: cst.Comparison, updated: cst.Comparison) -> cst.Comparison:
    target = updated.comparisons[0]
    operator = MIRROR[type(target.operator)](
        whitespace_before=target.operator.whitespace_before, whitespace_after=target.operator.whitespace_after
    )
    return updated.with_changes(
        left=target.comparator,
        comparisons=[target.with_changes(operator=operator, comparator=updated.left)],
    )


def _literal_side(node: cst.Comparison) -> bool:
    return m.matches(node.left, LITERAL) or m.matches(node.comparisons[0].comparator, LITERAL)


def _proven_numbers(module: cst.Module, ctx: FileContext, sites: list[Site], collector: _Collector) -> list[Site]:
    """The sites whose two operands astroid proves builtin numbers; the others are skipped, saying why."""
    left, refused = unprovable_sites(
        collector, sites, lambda site: [site.node.left, site.node.comparisons[0].comparator]
    )
    for site, why in refused:
        ctx.skip(f"rich comparison: no literal operand, and {why}", site)
    kept = []
    for site, compare in astroid_sites(module, ctx, left, an.Compare, collector.seen) if left else ():
        try:
            if compare is None:
                raise Refused("unmapped site: astroid has no comparison at this position")
            for operand in (compare.left, compare.ops[0][1]):
                if not number_types(operand) <= set(NUMERIC):
                    raise Refused(f"non-numeric operand: {operand.as_string()}")
            kept.append(site)
        except Refused as why:
            ctx.skip(f"rich comparison: no literal operand, and {why}", site)
    return kept


class ComparisonSwap(SiteTransform):
    id = "comparison-swap"
    moves_lines = False  # every line stays where it was: line-reading code sees no change
    description = "Mirror a single <, >, <=, >= comparison: a < b becomes b > a."
    collector = _Collector
    rewrite = staticmethod(_swap)

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        collector = self.collector(ctx)
        sites = collector.collect(module)
        others = [site for site in sites if not _literal_side(site.node)]
        try:
            proven = {id(site) for site in _proven_numbers(module, ctx, others, collector)} if others else set()
        finally:
            forget_inference()
        return [site for site in sites if _literal_side(site.node) or id(site) in proven]
