"""Find the literal constants of one module that may move to a JSON resource, and why others may not.

A literal may move only where reading it from a dict at run time is indistinguishable from the
literal: never where the grammar wants a literal (f-string interiors before 3.12, match
patterns), never where tools read source rather than run it (annotations, typing constructs,
version and platform checks, docstrings, dunder assignments such as ``__version__`` or
``__all__`` that packaging tools and linters parse), never where object identity could be
observed (operands of ``is``), and never in code that may run when module globals are gone
(``__del__``) or that a JIT compiles. Refusal rules live in `constants_rules`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import libcst as cst

from repoanchor.perturb.mirage.constants.rules import identity_compared, refusal
from repoanchor.perturb.sites import Site, SiteCollector
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.speed.literals import float_value, int_value, string_value

TRIVIAL = (0, 1, -1, "")
KEYWORD_VALUES = {"True": True, "False": False, "None": None}
MAX_INT_BITS = 2100
"""About 630 decimal digits: under 640, the lowest `sys.set_int_max_str_digits` any interpreter allows."""


@dataclass
class Scan:
    """Candidate literals grouped by exact value, plus refusals as (reason class, where) pairs."""

    groups: dict[tuple[str, str], list[Site]] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)


def value_key(value: object) -> tuple[str, str]:
    """Exact identity of a constant: `1`, `1.0`, `True`, `-0.0` and `'1'` are all different."""
    return (type(value).__name__, repr(value))


class _Scanner(SiteCollector):
    def __init__(self, keep_trivial: bool, first_allowed: int) -> None:
        super().__init__()
        self.keep_trivial = keep_trivial
        self.first_allowed = first_allowed
        self.scan = Scan()
        self.identity_groups: set[tuple[str, str]] = set()

    def visit_Integer(self, node: cst.Integer) -> None:
        try:
            value = int_value(node)
        except ValueError:  # more decimal digits than the interpreter converts
            self._refuse("huge-int", node)
            return
        if abs(value).bit_length() > MAX_INT_BITS:
            self._refuse("huge-int", node)
            return
        self._number(node, value)

    def visit_Float(self, node: cst.Float) -> None:
        value = float_value(node)
        if not math.isfinite(value):
            self._refuse("non-finite-float", node)  # strict JSON has no Infinity
            return
        self._number(node, value)

    def visit_Imaginary(self, node: cst.Imaginary) -> None:
        self._refuse("imaginary", node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._string(node)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        if _has_comment(node):
            self._refuse("comment-inside", node)
        else:
            self._string(node)
        return False

    def visit_FormattedString(self, node: cst.FormattedString) -> bool:
        for _ in range(_literals_inside(node)):
            self._refuse("f-string", node)
        return False

    def visit_TemplatedString(self, node: cst.CSTNode) -> bool:
        for _ in range(_literals_inside(node)):
            self._refuse("f-string", node)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in KEYWORD_VALUES and self.keep_trivial:
            self._candidate(node, KEYWORD_VALUES[node.value])

    def _number(self, node: cst.BaseNumber, value: int | float) -> None:
        parent = self.ancestors[-1] if self.ancestors else None
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            self._candidate(parent, -value, path=self.ancestors[:-1])
        else:
            self._candidate(node, value)

    def _string(self, node: cst.SimpleString | cst.ConcatenatedString) -> None:
        value = string_value(node)
        if isinstance(value, bytes):
            self._refuse("bytes", node)  # JSON has no bytes
        elif value is None:
            self._refuse("f-string", node)  # a concatenation with an f-string part
        else:
            self._candidate(node, value)

    def _candidate(self, node: cst.BaseExpression, value: object, path: list[cst.CSTNode] | None = None) -> None:
        chain = list(self.ancestors if path is None else path)
        reason = refusal(chain, node)
        if reason is None and _statement_index(chain) < self.first_allowed:
            reason = "before-loader"
        if reason is None and not self.keep_trivial and _is_trivial(value):
            reason = "trivial-value"
        if reason:
            self._refuse(reason, node)
            return
        key = value_key(value)
        if identity_compared(chain, node) and type(value) in (int, float, str):
            self.identity_groups.add(key)  # None, True and False are singletons, JSON or not
        site = Site(node, self.label(node), {"value": value, "scope": tuple(self.scope)}, tuple(chain))
        self.scan.groups.setdefault(key, []).append(site)

    def _refuse(self, reason: str, node: cst.CSTNode) -> None:
        self.scan.refused.append((reason, self.label(node)))


def scan_module(module: cst.Module, *, keep_trivial: bool, first_allowed: int) -> Scan:
    """Every externalizable literal of `module`, grouped by exact value, in source order.

    Statements before body index `first_allowed` run before the loader, so nothing there moves.
    A value compared by identity anywhere (``x is 'abc'``) is refused everywhere: interned
    literals are shared objects, values read from JSON are not.
    """
    scanner = _Scanner(keep_trivial, first_allowed)
    scanner.collect(module)
    scan = scanner.scan
    for key in sorted(scanner.identity_groups):
        for site in scan.groups.pop(key, []):
            scan.refused.append(("identity-comparison", site.where))
    return scan


def _is_trivial(value: object) -> bool:
    """0, 1, -1 (as int or float, -0.0 included), the empty string, and the keywords True/False/None."""
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, str):
        return value == ""
    return value in TRIVIAL


def _statement_index(chain: list[cst.CSTNode]) -> int:
    """Index in the module body of the top-level statement holding the node."""
    if len(chain) < 2 or not isinstance(chain[0], cst.Module):
        return 1 << 30
    for index, stmt in enumerate(chain[0].body):
        if stmt is chain[1]:
            return index
    return 1 << 30


def _has_comment(node: cst.ConcatenatedString) -> bool:
    return "#" in "".join(
        code_for_node(part.whitespace_between)
        for part in _concatenations(node)
        if isinstance(part.whitespace_between, cst.ParenthesizedWhitespace)
    )


def _concatenations(node: cst.BaseExpression):
    while isinstance(node, cst.ConcatenatedString):
        yield node
        node = node.right


_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary)


def _literals_inside(node: cst.CSTNode) -> int:
    from repoanchor.perturb.traversal.walk import children

    stack, count = [node], 0
    while stack:
        current = stack.pop()
        count += isinstance(current, _LITERALS)
        stack.extend(children(current))
    return count
