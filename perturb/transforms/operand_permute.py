"""operand-permute: ``a + b`` becomes ``b + a`` for ``+ * & | ^`` over proven builtin numbers.

Exact only over builtin numbers (``+ *``: bool, int, float, complex; ``& | ^``: bool, int):
strings and lists do not commute, a user ``__add__`` need not, and sets are excluded because
``{1} | {True}`` keeps the element ``1`` while ``{True} | {1}`` keeps ``True``.

Types are proven by astroid over the whole file (`perturb.proofs.builtin_numbers`): every value inferred for
every leaf must be such a number; uninferable or ambiguous means no swap (so parameters are refused). Sites whose
operands the file's bindings already rule out are refused before astroid builds the file (`proofs/unprovable.py`).

The swap reorders evaluation, so operands hold only names, plain attributes (no property),
numeric literals, unary ``- + ~ not`` and nested ``+ - * & | ^``: no call, await, yield, walrus,
subscript (they run code), ``/ // % ** << >>`` (of two raising operands the other would raise
first). Each ``BinaryOperation`` is a site by identity (``a + b + c`` has two); a moved left operand
is parenthesised when it would re-associate, so spines deeper than MAX_CHAIN are refused.
"""

from __future__ import annotations

import libcst as cst
from astroid import nodes as an

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.proofs.bindings_seen import BindingsCollector
from repoanchor.perturb.proofs.builtin_numbers import NUMERIC, Refused, astroid_sites, forget_inference, number_types
from repoanchor.perturb.proofs.unprovable import unprovable_sites
from repoanchor.perturb.sites import Site, SiteTransform
from repoanchor.perturb.speed.node_order import BINARY

SWAPPABLE = {op: BINARY[op] for op in (cst.Add, cst.Multiply, cst.BitAnd, cst.BitOr, cst.BitXor)}
UNARY_OPS = (cst.Minus, cst.Plus, cst.BitInvert, cst.Not)
PRECEDENCE = {cst.BitOr: 1, cst.BitXor: 2, cst.BitAnd: 3, cst.Add: 4, cst.Subtract: 4, cst.Multiply: 5}
MAX_CHAIN = 50  # swaps down a left spine nest parentheses, and CPython allows 200 levels
EFFECTFUL = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Subscript)
NON_NUMERIC = (cst.BaseString, cst.List, cst.Tuple, cst.Set, cst.Dict, cst.BaseComp, cst.Lambda)


def _shape_problem(node: cst.BaseExpression) -> str | None:
    """Why evaluating `node` could run code, raise, or not be a number, judged from its shape."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.Imaginary)):
        return None
    if isinstance(node, cst.Attribute):
        return _shape_problem(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, UNARY_OPS):
        return _shape_problem(node.expression)
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in PRECEDENCE:
        return _shape_problem(node.left) or _shape_problem(node.right)
    if isinstance(node, cst.BinaryOperation):
        return f"effectful operand: {type(node.operator).__name__} may raise"
    if isinstance(node, EFFECTFUL):
        return f"effectful operand: {type(node).__name__} may run code or raise"
    kind = "non-numeric" if isinstance(node, NON_NUMERIC) else "unsupported"
    return f"{kind} operand: {type(node).__name__}"


def _spine(node: cst.BaseExpression, limit: int = MAX_CHAIN + 1) -> int:
    return 1 + _spine(node.left, limit - 1) if limit and isinstance(node, cst.BinaryOperation) and not node.lpar else 0


class _Collector(BindingsCollector):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.seen = 0
        """Binary operations met so far, sites or not: a site's rank maps it to astroid's node."""

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.seen += 1
        if type(node.operator) not in SWAPPABLE:
            return
        if _spine(node.left) > MAX_CHAIN:
            problem = f"deep chain: over {MAX_CHAIN} nested operations would pass the parser's parenthesis limit"
        else:
            problem = _shape_problem(node.left) or _shape_problem(node.right)
        if problem:
            self.ctx.skip(problem, self.label(node))
        else:
            self.add(node, order=self.seen - 1)


def _typed(module: cst.Module, ctx: FileContext, sites: list[Site], collector: _Collector) -> list[Site]:
    left, refused = unprovable_sites(collector, sites, lambda site: [site.node.left, site.node.right])
    for site, why in refused:
        ctx.skip(why, site)
    kept = []
    for site, binop in astroid_sites(module, ctx, left, an.BinOp, collector.seen) if left else ():
        allowed = {"bool", "int"} if SWAPPABLE[type(site.node.operator)] in "&|^" else set(NUMERIC)
        try:
            if binop is None:
                raise Refused("unmapped site: astroid has no operation at this position")
            for operand in (binop.left, binop.right):
                if not number_types(operand) <= allowed:
                    raise Refused(f"non-numeric operand: {operand.as_string()} is not an int under a bitwise operator")
            kept.append(site)
        except Refused as why:
            ctx.skip(str(why), site)
    return kept


def _swap(site: Site, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BinaryOperation:
    moved = updated.left
    level = PRECEDENCE[type(updated.operator)]
    if isinstance(moved, cst.BinaryOperation) and not moved.lpar and PRECEDENCE[type(moved.operator)] <= level:
        moved = moved.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return updated.with_changes(left=updated.right, right=moved)


class OperandPermute(SiteTransform):
    id = "operand-permute"
    moves_lines = False  # every line stays where it was: line-reading code sees no change
    description = "Swap the operands of + * & | ^ when astroid proves both are plain builtin numbers."
    collector = _Collector
    rewrite = staticmethod(_swap)

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        collector = self.collector(ctx)
        sites = collector.collect(module)
        try:
            return _typed(module, ctx, sites, collector) if sites else []
        finally:
            forget_inference()
