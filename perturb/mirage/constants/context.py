"""What a literal is *for*, read from its surroundings: the words a plausible key is built from.

``TIMEOUT = 30`` gives ("timeout", assign); ``connect(timeout=30)`` gives ("timeout", keyword);
``def f(retries=3)`` gives ("retries", default); ``if n > 100`` gives ("n", compare-max);
``", ".join(xs)`` gives ("join", receiver). The role picks the suffix vocabulary in
`constants_names`; the words come from the code, so keys read like hand-written config.
"""

from __future__ import annotations

import re

import libcst as cst

from repoanchor.perturb.bindings import dotted_name
from repoanchor.perturb.speed.literals import string_value

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_GENERIC_CALLS = {"len", "int", "str", "float", "abs", "type", "isinstance", "bool", "repr", "round", "min", "max"}
_COMPARE_ROLES = {
    cst.GreaterThan: "compare-max",
    cst.GreaterThanEqual: "compare-max",
    cst.LessThan: "compare-min",
    cst.LessThanEqual: "compare-min",
    cst.In: "compare-in",
    cst.NotIn: "compare-in",
}
_BINARY_ROLES = {
    cst.Multiply: "operand-scale",
    cst.Divide: "operand-divisor",
    cst.FloorDivide: "operand-divisor",
    cst.Add: "operand-offset",
    cst.Subtract: "operand-offset",
    cst.Modulo: "operand-modulo",
    cst.Power: "operand-exponent",
    cst.LeftShift: "operand-shift",
    cst.RightShift: "operand-shift",
    cst.BitAnd: "operand-mask",
    cst.BitOr: "operand-mask",
    cst.BitXor: "operand-mask",
}
_STOP = (cst.BaseStatement, cst.BaseSmallStatement, cst.Lambda, cst.BaseComp, cst.FunctionDef, cst.ClassDef)


def words_of(name: str) -> list[str]:
    """``maxRetries`` and ``MAX_RETRIES`` both give ["max", "retries"]; at most three words."""
    return [w.lower() for w in _WORD.findall(name)][:3]


def expr_words(expr: cst.BaseExpression | None) -> list[str]:
    """Words naming an expression: a name, an attribute, a call's function or subject, a string key."""
    if expr is None:
        return []
    if isinstance(expr, cst.Call):
        func = dotted_name(expr.func) or ""
        if func in _GENERIC_CALLS and expr.args:
            return expr_words(expr.args[0].value)
        return words_of(func.rsplit(".", 1)[-1])
    if isinstance(expr, cst.Subscript):
        return expr_words(expr.value)
    if isinstance(expr, cst.Attribute):
        return words_of(expr.attr.value)
    if isinstance(expr, cst.Name):
        return words_of(expr.value)
    if isinstance(expr, cst.SimpleString):
        return string_words(string_value(expr))
    return []


def string_words(value: object) -> list[str]:
    """Words of a short identifier-like string (``"X-Api-Key"``), else none."""
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z][A-Za-z0-9_\- ]{0,30}", value):
        return words_of(value)
    return []


def context_of(chain: list[cst.CSTNode], node: cst.CSTNode) -> tuple[list[str], str]:
    """(words, role) for the literal `node` whose ancestors are `chain` (module first)."""
    child = node
    for parent in reversed(chain):
        found = _context_step(parent, child)
        if found is not None:
            return found
        if isinstance(parent, _STOP):
            break
        child = parent
    return [], "value"


def _context_step(parent: cst.CSTNode, child: cst.CSTNode) -> tuple[list[str], str] | None:
    if isinstance(parent, cst.Arg) and parent.keyword is not None:
        return words_of(parent.keyword.value), "keyword"
    if isinstance(parent, cst.Call) and child is not parent.func:
        first = next((arg for arg in parent.args if arg.keyword is None and not arg.star), None)
        return expr_words(parent), "argument" if child is first else "argument:rest"
    if isinstance(parent, cst.Attribute) and child is parent.value:
        return words_of(parent.attr.value), "receiver"
    if isinstance(parent, cst.Param) and child is parent.default:
        return words_of(parent.name.value), "default"
    if isinstance(parent, cst.Assign) and child is parent.value:
        return _target_words(parent.targets[-1].target), "assign"
    if isinstance(parent, cst.AnnAssign) and child is parent.value:
        return _target_words(parent.target), "assign"
    if isinstance(parent, cst.AugAssign):
        return _target_words(parent.target), "step"
    if isinstance(parent, cst.DictElement):
        if child is parent.value:
            return expr_words(parent.key), "field"
        return expr_words(parent.key), "dict-key"
    if isinstance(parent, cst.Comparison):
        return _comparison_context(parent, child)
    if isinstance(parent, cst.BinaryOperation):
        partner = parent.right if child is parent.left else parent.left
        side = ":left" if child is parent.left else ":right"
        return expr_words(partner), _BINARY_ROLES.get(type(parent.operator), "operand-offset") + side
    if isinstance(parent, cst.Subscript) and child is not parent.value:
        return expr_words(parent.value), "index"
    if isinstance(parent, cst.Return):
        return [], "return"
    return None


def _target_words(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, (cst.Tuple, cst.List)) and target.elements:
        return _target_words(target.elements[0].value)
    if isinstance(target, cst.Subscript) and len(target.slice) == 1:
        index = target.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return string_words(string_value(index.value)) or expr_words(target.value)
    return expr_words(target)


def _comparison_context(comparison: cst.Comparison, child: cst.CSTNode) -> tuple[list[str], str]:
    """Seen from the other operand: in ``n > 100`` and ``100 < n`` alike, 100 is a maximum."""
    targets = list(comparison.comparisons)
    if child is comparison.left:
        operator, partner = _flipped(targets[0].operator), targets[0].comparator
    else:
        index = next((i for i, t in enumerate(targets) if t is child), 0)
        operator = targets[index].operator
        partner = comparison.left if index == 0 else targets[index - 1].comparator
    return expr_words(partner), _COMPARE_ROLES.get(type(operator), "compare-eq")


def _flipped(operator: cst.BaseCompOp) -> cst.BaseCompOp:
    if isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual)):
        return cst.LessThan()
    if isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
        return cst.GreaterThan()
    return operator
