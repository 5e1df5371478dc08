"""Opaque predicates: literal-only boolean expressions with a fixed value that is not obvious.

`opaque(rng, value)` draws an expression that always evaluates to `value`. It starts from the
wanted truth value and expands it a few rounds with equivalent boolean forms (``not False``,
``False or True``, ``True ^ False``, ``(a) == (b)`` ...), then turns leaves into atoms: integer,
string, bitwise and arithmetic comparisons. Each atom's truth is computed here with
`operator` while building (no ``eval``); an atom with the wrong truth gets its comparison
operator negated. Only literals and keywords appear, so no rebinding in the target module
can change the value, and nothing in it can raise or warn when compiled or run.

All randomness comes from the caller's RNG (never the global `random`), so a predicate is a
deterministic function of the pass seed. Nodes are built directly (parsing each predicate
would cost more than the rest of a site's rewrite); every operand that is not a bare keyword
is parenthesised, since ``^`` and ``==`` bind tighter than ``not``/``and``/``or``.
"""

from __future__ import annotations

import operator
import random
import string
from collections.abc import Callable

import libcst as cst

from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.speed.prerendered import prerender

COMPARE: dict[str, tuple[Callable[[object, object], bool], type[cst.BaseCompOp]]] = {
    "<": (operator.lt, cst.LessThan),
    "<=": (operator.le, cst.LessThanEqual),
    ">": (operator.gt, cst.GreaterThan),
    ">=": (operator.ge, cst.GreaterThanEqual),
    "==": (operator.eq, cst.Equal),
    "!=": (operator.ne, cst.NotEqual),
}
NEGATED = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
BITWISE = {"&": (operator.and_, cst.BitAnd), "|": (operator.or_, cst.BitOr), "^": (operator.xor, cst.BitXor)}
ARITHMETIC = {"+": (operator.add, cst.Add), "-": (operator.sub, cst.Subtract), "*": (operator.mul, cst.Multiply)}
_ALNUM = string.ascii_lowercase + string.digits


def opaque(rng: random.Random, value: bool = True, depth: int | None = None) -> cst.BaseExpression:
    """A literal-only expression that evaluates to `value`, registered with its code (`speed/prerendered.py`)."""
    return prerender(*_expand(rng, value, rng.randint(1, 2) if depth is None else depth))


def opaque_source(rng: random.Random, value: bool = True, depth: int | None = None) -> str:
    return code_for_node(opaque(rng, value, depth))


Built = tuple[cst.BaseExpression, str]
"""A node and its code, made together: the code is what LibCST emits for the node (new nodes' default spacing)."""


def _expand(rng: random.Random, value: bool, depth: int, parens: bool = False) -> Built:
    """`parens`: an operand, parenthesised unless a bare keyword (built so, not copied: a node is validated
    whenever it is made)."""
    if depth <= 0:
        return _leaf(rng, value, parens)
    wrap = _parens(parens)
    form = rng.randrange(5)
    if form == 0:
        inner, code = _expand(rng, not value, depth - 1, parens=True)
        return cst.UnaryOperation(cst.Not(), inner, **wrap), _enclosed(f"not {code}", parens)
    if form == 1:  # or: at least one side carries the truth
        left, right = rng.choice([(True, True), (True, False), (False, True)]) if value else (False, False)
        return _joined(cst.BooleanOperation, cst.Or(), "or", _operands(rng, left, right, depth), wrap)
    if form == 2:
        left, right = (True, True) if value else rng.choice([(False, False), (True, False), (False, True)])
        return _joined(cst.BooleanOperation, cst.And(), "and", _operands(rng, left, right, depth), wrap)
    left = rng.random() < 0.5
    if form == 3:
        return _joined(cst.BinaryOperation, cst.BitXor(), "^", _operands(rng, left, left != value, depth), wrap)
    (first, first_code), (second, second_code) = _operands(rng, left, left == value, depth)
    node = cst.Comparison(first, [cst.ComparisonTarget(cst.Equal(), second)], **wrap)
    return node, _enclosed(f"{first_code} == {second_code}", parens)


def _joined(kind: type, operator: cst.CSTNode, symbol: str, operands: tuple[Built, Built], wrap: dict) -> Built:
    """A two-operand node and its code; `wrap`: its parenthesis fields (`_parens`), if any."""
    (first, first_code), (second, second_code) = operands
    return kind(first, operator, second, **wrap), _enclosed(f"{first_code} {symbol} {second_code}", bool(wrap))


def _operands(rng: random.Random, left: bool, right: bool, depth: int) -> tuple[Built, Built]:
    return _expand(rng, left, depth - 1, parens=True), _expand(rng, right, depth - 1, parens=True)


def _parens(wanted: bool = True) -> dict[str, list]:
    """The parenthesis fields of one new node (fresh nodes for each: a node has one parent)."""
    return {"lpar": [cst.LeftParen()], "rpar": [cst.RightParen()]} if wanted else {}


def _enclosed(code: str, parens: bool) -> str:
    return f"({code})" if parens else code


def _int(value: int) -> Built:
    literal = cst.Integer(str(abs(value)))
    return (cst.UnaryOperation(cst.Minus(), literal), f"-{abs(value)}") if value < 0 else (literal, str(value))


def _leaf(rng: random.Random, value: bool, parens: bool = False) -> Built:
    if rng.random() < 0.25:
        return cst.Name(str(value)), str(value)
    (left, left_code), op, (right, right_code), truth = rng.choice((_int_atom, _str_atom, _bitwise_atom, _arith_atom))(
        rng
    )
    if truth != value:
        op = NEGATED[op]
    node = cst.Comparison(left, [cst.ComparisonTarget(COMPARE[op][1](), right)], **_parens(parens))
    return node, _enclosed(f"{left_code} {op} {right_code}", parens)


Atom = tuple[Built, str, Built, bool]


def _int_atom(rng: random.Random) -> Atom:
    a, b, op = rng.randint(0, 30), rng.randint(0, 30), rng.choice(list(COMPARE))
    return _int(a), op, _int(b), COMPARE[op][0](a, b)


def _str_atom(rng: random.Random) -> Atom:
    a = "".join(rng.choice(_ALNUM) for _ in range(rng.randint(1, 8)))
    b = rng.choice([a, a[::-1], "".join(rng.choice(_ALNUM) for _ in range(rng.randint(1, 8)))])
    op = rng.choice(["==", "!="])
    return (cst.SimpleString(repr(a)), repr(a)), op, (cst.SimpleString(repr(b)), repr(b)), COMPARE[op][0](a, b)


def _operation(a: int, symbol: str, b: int, node: type) -> Built:
    (left, left_code), (right, right_code) = _int(a), _int(b)
    return cst.BinaryOperation(left, node(), right, **_parens()), f"({left_code} {symbol} {right_code})"


def _bitwise_atom(rng: random.Random) -> Atom:
    a, b, sym = rng.randint(1, 15), rng.randint(1, 15), rng.choice(list(BITWISE))
    compute, node = BITWISE[sym]
    result = compute(a, b)
    expected = result + rng.choice([0, 0, 1, -1, 2])
    return _operation(a, sym, b, node), "==", _int(expected), result == expected


def _arith_atom(rng: random.Random) -> Atom:
    a, b, sym = rng.randint(1, 100), rng.randint(1, 100), rng.choice(list(ARITHMETIC))
    compute, node = ARITHMETIC[sym]
    result = compute(a, b)
    op = rng.choice(list(COMPARE))
    bound = result + rng.randint(-5, 5)
    return _operation(a, sym, b, node), op, _int(bound), COMPARE[op][0](result, bound)
