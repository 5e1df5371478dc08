"""Values of LibCST literals without an `ast` parse each.

LibCST's `evaluated_value` runs `ast.literal_eval` on a literal's text: a parse and a compile per literal,
most of a constants scan's time on a literal-heavy module (8x the rest on sympy). These read the same values
directly where the text is plain (int and float literals; a string with no backslash, no carriage return and
no bytes prefix) and defer to `evaluated_value` for the rest. Equal to it on every literal of this repository
and of the golden trees (tests/perturb/test_literals.py).
"""

from __future__ import annotations

import libcst as cst

_PLAIN_PREFIXES = frozenset({"", "r", "u"})


def int_value(node: cst.Integer) -> int:
    """The literal's int (0x, 0o, 0b and underscores included). Raises ValueError for more decimal digits than
    the interpreter converts (where `evaluated_value` raises SyntaxError)."""
    return int(node.value, 0)


def float_value(node: cst.Float) -> float:
    """The literal's float (``float`` reads every float literal form, underscores included)."""
    return float(node.value)


def string_value(node: cst.SimpleString | cst.ConcatenatedString) -> str | bytes | None:
    """`node.evaluated_value`: the string, bytes, or None for a concatenation with an f-string part or of str
    with bytes."""
    if isinstance(node, cst.ConcatenatedString):
        return _concatenated(node)
    if node.prefix.lower() in _PLAIN_PREFIXES:
        body = node.raw_value
        if "\\" not in body and "\r" not in body:  # no escape to read; a parse would turn \r\n into \n
            return body
    return node.evaluated_value


def _concatenated(node: cst.ConcatenatedString) -> str | bytes | None:
    """LibCST's rules for `ConcatenatedString.evaluated_value`, on `string_value`'s parts."""
    left, right = node.left, node.right
    if isinstance(left, cst.FormattedString) or isinstance(right, cst.FormattedString):
        return None
    left_value, right_value = string_value(left), string_value(right)
    if right_value is None or type(left_value) is not type(right_value):
        return None
    return left_value + right_value
