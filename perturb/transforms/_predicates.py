"""Opaque predicates: literal-only boolean expressions with a fixed value that is not obvious.

`opaque(rng, value)` draws an expression that always evaluates to `value`. It starts from the
wanted truth value and expands it a few rounds with equivalent boolean forms (``not False``,
``False or True``, ``True ^ False``, ``(a) == (b)`` ...), then turns leaves into atoms: integer,
string, bitwise and arithmetic comparisons. Each atom's truth is computed here with
`operator` while building (no ``eval``); an atom with the wrong truth gets its comparison
operator negated. Only literals and keywords appear, so no rebinding in the target module
can change the value, and nothing in it can raise or warn when compiled or run.

All randomness comes from the caller's RNG (never the global `random`), so a predicate is a
deterministic function of the pass seed.
"""

from __future__ import annotations

import operator
import random
import string
from collections.abc import Callable

import libcst as cst

COMPARE: dict[str, Callable[[object, object], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}
NEGATED = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
BITWISE: dict[str, Callable[[int, int], int]] = {"&": operator.and_, "|": operator.or_, "^": operator.xor}
ARITHMETIC: dict[str, Callable[[int, int], int]] = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_ALNUM = string.ascii_lowercase + string.digits


def opaque(rng: random.Random, value: bool = True, depth: int | None = None) -> cst.BaseExpression:
    """A literal-only expression that evaluates to `value`."""
    return cst.parse_expression(opaque_source(rng, value, depth))


def opaque_source(rng: random.Random, value: bool = True, depth: int | None = None) -> str:
    return _expand(rng, value, rng.randint(1, 2) if depth is None else depth)


def _expand(rng: random.Random, value: bool, depth: int) -> str:
    if depth <= 0:
        return _leaf(rng, value)
    form = rng.randrange(5)
    if form == 0:
        return f"not {_operand(_expand(rng, not value, depth - 1))}"
    if form == 1:  # or: at least one side carries the truth
        left, right = rng.choice([(True, True), (True, False), (False, True)]) if value else (False, False)
        return _binary(rng, "or", left, right, depth)
    if form == 2:
        left, right = (True, True) if value else rng.choice([(False, False), (True, False), (False, True)])
        return _binary(rng, "and", left, right, depth)
    left = rng.random() < 0.5
    if form == 3:
        return _binary(rng, "^", left, left != value, depth)
    return _binary(rng, "==", left, left == value, depth)


def _binary(rng: random.Random, op: str, left: bool, right: bool, depth: int) -> str:
    return f"{_operand(_expand(rng, left, depth - 1))} {op} {_operand(_expand(rng, right, depth - 1))}"


def _operand(code: str) -> str:
    """Parenthesise anything but a bare keyword: ``^`` and ``==`` bind tighter than ``not``."""
    return code if code in ("True", "False") else f"({code})"


def _leaf(rng: random.Random, value: bool) -> str:
    if rng.random() < 0.25:
        return str(value)
    left, op, right, truth = rng.choice((_int_atom, _str_atom, _bitwise_atom, _arith_atom))(rng)
    if truth != value:
        op = NEGATED[op]
    return f"{left} {op} {right}"


def _int_atom(rng: random.Random) -> tuple[str, str, str, bool]:
    a, b, op = rng.randint(0, 30), rng.randint(0, 30), rng.choice(list(COMPARE))
    return str(a), op, str(b), COMPARE[op](a, b)


def _str_atom(rng: random.Random) -> tuple[str, str, str, bool]:
    a = "".join(rng.choice(_ALNUM) for _ in range(rng.randint(1, 8)))
    b = rng.choice([a, a[::-1], "".join(rng.choice(_ALNUM) for _ in range(rng.randint(1, 8)))])
    op = rng.choice(["==", "!="])
    return repr(a), op, repr(b), COMPARE[op](a, b)


def _bitwise_atom(rng: random.Random) -> tuple[str, str, str, bool]:
    a, b, sym = rng.randint(1, 15), rng.randint(1, 15), rng.choice(list(BITWISE))
    result = BITWISE[sym](a, b)
    expected = result + rng.choice([0, 0, 1, -1, 2])
    return f"({a} {sym} {b})", "==", str(expected), result == expected


def _arith_atom(rng: random.Random) -> tuple[str, str, str, bool]:
    a, b, sym = rng.randint(1, 100), rng.randint(1, 100), rng.choice(list(ARITHMETIC))
    result = ARITHMETIC[sym](a, b)
    op = rng.choice(list(COMPARE))
    bound = result + rng.randint(-5, 5)
    return f"({a} {sym} {b})", op, str(bound), COMPARE[op](result, bound)
