"""comparison-swap: ``a < b`` becomes ``b > a`` (and <=, >, >= likewise).

Only single-operator comparisons whose operands cannot run code with visible side effects
when evaluated (names, attribute chains, literals and arithmetic over them): swapping the
operands swaps their evaluation order, so a call on either side is refused.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, SiteTransform

MIRROR = {
    cst.LessThan: cst.GreaterThan,
    cst.GreaterThan: cst.LessThan,
    cst.LessThanEqual: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThanEqual,
}
SIDE_EFFECT_FREE = m.OneOf(
    m.Name(),
    m.Attribute(),
    m.Integer(),
    m.Float(),
    m.Imaginary(),
    m.SimpleString(),
    m.UnaryOperation(),
    m.BinaryOperation(),
    m.Subscript(),
)
EFFECTFUL = m.OneOf(m.Call(), m.Await(), m.Yield(), m.NamedExpr(), m.Lambda(), m.GeneratorExp())


def _pure(node: cst.BaseExpression) -> bool:
    return m.matches(node, SIDE_EFFECT_FREE) and not m.findall(node, EFFECTFUL)


class _Collector(SiteCollector):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1 or type(node.comparisons[0].operator) not in MIRROR:
            return
        if _pure(node.left) and _pure(node.comparisons[0].comparator):
            self.add(node)
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


class ComparisonSwap(SiteTransform):
    id = "comparison-swap"
    description = "Mirror a single <, >, <=, >= comparison: a < b becomes b > a."
    collector = _Collector
    rewrite = staticmethod(_swap)
