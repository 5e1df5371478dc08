"""Checks shared by several transformations: docstrings, introspection, negation, scope declarations (names a
module binds and where its imports bind them: `bindings.py`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from repoanchor.perturb.traversal.walk import walk

FRAME_INTROSPECTION_ATTRS = frozenset(
    {"_getframe", "currentframe", "stack", "getouterframes", "getinnerframes", "trace", "f_locals", "f_back"}
)
INTROSPECTION_CALLS = frozenset({"locals", "vars", "eval", "exec", "dir", "globals"})
_GETTEXT_NAME = re.compile(r"^(_|[A-Z]{1,3}_|\w*gettext\w*)$")


def compares_name(comparison: cst.Comparison, name: str) -> bool:
    """Whether the bare name `name` is an operand of `comparison` (``__name__`` in a main guard)."""
    operands = [comparison.left, *(target.comparator for target in comparison.comparisons)]
    return any(isinstance(operand, cst.Name) and operand.value == name for operand in operands)


def is_gettext_call(name: str) -> bool:
    """Whether a call named `name` (dotted or not) marks its literal arguments as messages, which xgettext, Babel and
    Django's makemessages extract from the source text: ``_``, ``N_``-style markers (humanize's ``P_``, ``NS_``) and
    any ``*gettext*``. A split or moved literal is no message (humanize's tests run xgettext on its modules)."""
    return bool(_GETTEXT_NAME.match(name.rpartition(".")[2]))


def is_docstring(stmt: cst.BaseStatement | cst.BaseSmallStatement) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        stmt = stmt.body[0]
    return isinstance(stmt, cst.Expr) and isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString))


def docstring_count(body: Sequence[cst.BaseStatement]) -> int:
    """1 if the first statement of a block is a docstring-like string expression, else 0."""
    return 1 if body and is_docstring(body[0]) else 0


FRAME_ATTRS = frozenset({"f_locals", "f_back", "f_globals"})
"""Attributes of a frame object that reach another scope's names."""


def call_introspection(node: cst.Call) -> str | None:
    """What this call observes local names with (``locals()``, ``eval()``, ``sys._getframe()``...), or None."""
    func = node.func
    if isinstance(func, cst.Name) and func.value in INTROSPECTION_CALLS:
        return f"{func.value}()"
    if isinstance(func, cst.Attribute) and func.attr.value in FRAME_INTROSPECTION_ATTRS:
        return f".{func.attr.value}()"
    return None


def attribute_introspection(node: cst.Attribute) -> str | None:
    """`.f_locals`, `.f_back` or `.f_globals` when this attribute reads one, else None."""
    return f".{node.attr.value}" if node.attr.value in FRAME_ATTRS else None


class _IntrospectionFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: str | None = None

    def visit_Call(self, node: cst.Call) -> None:
        self.found = self.found or call_introspection(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found = self.found or attribute_introspection(node)


def introspection_in(node: cst.CSTNode) -> str | None:
    """What in `node` could observe local names (locals(), eval, exec, frames), or None."""
    finder = _IntrospectionFinder()
    walk(finder, node)
    return finder.found


_INTROSPECTION_WORDS = re.compile(
    r"\b(?:" + "|".join(sorted(INTROSPECTION_CALLS | FRAME_INTROSPECTION_ATTRS | FRAME_ATTRS)) + r")\b"
)


def may_introspect(code: str | None) -> bool:
    """Whether `introspection_in` may find anything in a module whose text is `code` (None: not known): it finds
    only names and attributes spelled as one of its words, and four files in five of a large project hold none."""
    return code is None or _INTROSPECTION_WORDS.search(code) is not None


# These bind looser than `not`; a comparison binds tighter, but `not a < b` misleads readers.
_PARENTHESISED_UNDER_NOT = (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Yield, cst.Comparison)


def negated(expr: cst.BaseExpression) -> cst.UnaryOperation:
    """``not expr``, parenthesising a bare `expr` that binds looser than ``not``, or a comparison."""
    if not expr.lpar and isinstance(expr, _PARENTHESISED_UNDER_NOT):
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(whitespace_after=cst.SimpleWhitespace(" ")), expression=expr)


def spaced(whitespace: cst.BaseParenthesizableWhitespace) -> cst.BaseParenthesizableWhitespace:
    """`whitespace`, or one space where it is empty: ``if(x)`` must not become ``ifnot (x)``."""
    if isinstance(whitespace, cst.SimpleWhitespace) and not whitespace.value:
        return cst.SimpleWhitespace(" ")
    return whitespace


class _DeclarationFinder(cst.CSTVisitor):
    """``global``/``nonlocal`` statements of the scope being visited, not of nested scopes."""

    def __init__(self) -> None:
        self.found: str | None = None

    def visit_Global(self, node: cst.Global) -> None:
        self.found = self.found or "global " + ", ".join(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.found = self.found or "nonlocal " + ", ".join(item.name.value for item in node.names)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def scope_declaration_in(node: cst.CSTNode) -> str | None:
    """The first ``global``/``nonlocal`` in `node` that belongs to its own scope, or None.

    Duplicating such a declaration is a SyntaxError once the first copy's uses precede the second.
    """
    finder = _DeclarationFinder()
    walk(finder, node)
    return finder.found
