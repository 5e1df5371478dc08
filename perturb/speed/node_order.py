"""Astroid's node for each LibCST site by source order, so no emission has to mark the sites' spans.

Both trees come from one text, and LibCST's walk visits fields in source order, so the k-th node of a kind
in a collector's pre-order is the k-th of astroid's nodes of that kind sorted by where they start (an
enclosing node first: it starts earlier, or at the same place and ends later). The mapping is trusted only
where that reasoning holds: every astroid node has a position, none sits in an f-string (Python 3.11's `ast`
may misplace the expressions inside one), the two counts agree, and each pair has the same shape (operators,
names, attributes, kinds of literal, down to the operands' leaves). Otherwise `in_source_order` or
`same_shape` says no, and the caller maps by character spans instead.
"""

from __future__ import annotations

import libcst as cst
from astroid import nodes as an

BINARY = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
    cst.BitOr: "|",
    cst.BitAnd: "&",
    cst.BitXor: "^",
    cst.MatrixMultiply: "@",
}
UNARY = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not"}
COMPARE = {
    cst.LessThan: "<",
    cst.GreaterThan: ">",
    cst.LessThanEqual: "<=",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.Is: "is",
    cst.IsNot: "is not",
}
NUMBERS = {cst.Integer: int, cst.Float: float, cst.Imaginary: complex}
KEYWORD_CONSTANTS = {"True": True, "False": False, "None": None}
SAME_KIND = {
    cst.Subscript: (an.Subscript,),
    cst.SimpleString: (an.Const,),
    cst.ConcatenatedString: (an.Const, an.JoinedStr),
    cst.FormattedString: (an.JoinedStr,),
    cst.List: (an.List,),
    cst.Tuple: (an.Tuple,),
    cst.Set: (an.Set,),
    cst.Dict: (an.Dict,),
    cst.Ellipsis: (an.Const,),
    cst.Call: (an.Call,),
    cst.NamedExpr: (an.NamedExpr,),
    cst.Await: (an.Await,),
    cst.Yield: (an.Yield, an.YieldFrom),
    cst.Lambda: (an.Lambda,),
    cst.IfExp: (an.IfExp,),
    cst.BooleanOperation: (an.BoolOp,),
    cst.GeneratorExp: (an.GeneratorExp,),
    cst.ListComp: (an.ListComp,),
    cst.SetComp: (an.SetComp,),
    cst.DictComp: (an.DictComp,),
}
"""Other operands, compared by kind alone; any kind not here is no match (the spans decide)."""


def in_source_order(tree: an.Module, kind: type, count: int) -> list[an.NodeNG] | None:
    """Astroid's nodes of `kind` in source order, or None where that order cannot be trusted to match the
    `count` nodes of the same kind a LibCST pre-order walk met."""
    found = list(tree.nodes_of_class(kind))
    if len(found) != count or any(_unplaced(node) for node in found):
        return None
    return sorted(found, key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset))


def _unplaced(node: an.NodeNG) -> bool:
    """Whether `node` lacks a position or sits in an f-string, where its position may be off."""
    if node.lineno is None or node.end_lineno is None:
        return True
    parent = node.parent
    while parent is not None and not parent.is_statement:
        if type(parent) is an.JoinedStr:
            return True
        parent = parent.parent
    return False


def same_shape(node: cst.CSTNode, other: an.NodeNG) -> bool:
    """Whether astroid's `other` spells the same expression as LibCST's `node`, as far as its operators, names,
    attributes and literal kinds go (parentheses and whitespace aside)."""
    kind = type(node)
    if kind is cst.Name:
        if node.value in KEYWORD_CONSTANTS:
            return type(other) is an.Const and other.value is KEYWORD_CONSTANTS[node.value]
        return type(other) is an.Name and other.name == node.value
    if kind is cst.Attribute:
        return type(other) is an.Attribute and other.attrname == node.attr.value and same_shape(node.value, other.expr)
    if kind in NUMBERS:
        return type(other) is an.Const and type(other.value) is NUMBERS[kind]
    if kind is cst.UnaryOperation:
        return (
            type(other) is an.UnaryOp
            and other.op == UNARY.get(type(node.operator))
            and same_shape(node.expression, other.operand)
        )
    if kind is cst.BinaryOperation:
        return (
            type(other) is an.BinOp
            and other.op == BINARY.get(type(node.operator))
            and same_shape(node.left, other.left)
            and same_shape(node.right, other.right)
        )
    if kind is cst.Comparison:
        return type(other) is an.Compare and _same_comparison(node, other)
    return type(other) in SAME_KIND.get(kind, ())


def _same_comparison(node: cst.Comparison, other: an.Compare) -> bool:
    if len(node.comparisons) != len(other.ops) or not same_shape(node.left, other.left):
        return False
    return all(
        op == COMPARE.get(type(target.operator)) and same_shape(target.comparator, right)
        for target, (op, right) in zip(node.comparisons, other.ops, strict=True)
    )
