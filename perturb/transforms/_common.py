"""Checks shared by several transformations: docstrings, introspection, rebound builtins."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import libcst as cst
import libcst.matchers as m

FRAME_INTROSPECTION_ATTRS = frozenset(
    {"_getframe", "currentframe", "stack", "getouterframes", "getinnerframes", "trace", "f_locals", "f_back"}
)
_STAR_IMPORT = re.compile(r"import\s+\*")
INTROSPECTION_CALLS = frozenset({"locals", "vars", "eval", "exec", "dir", "globals"})


def is_docstring(stmt: cst.BaseStatement | cst.BaseSmallStatement) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        stmt = stmt.body[0]
    return isinstance(stmt, cst.Expr) and isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString))


def docstring_count(body: Sequence[cst.BaseStatement]) -> int:
    """1 if the first statement of a block is a docstring-like string expression, else 0."""
    return 1 if body and is_docstring(body[0]) else 0


class _IntrospectionFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: str | None = None

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value in INTROSPECTION_CALLS:
            self.found = self.found or f"{func.value}()"
        elif isinstance(func, cst.Attribute) and func.attr.value in FRAME_INTROSPECTION_ATTRS:
            self.found = self.found or f".{func.attr.value}()"

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in {"f_locals", "f_back", "f_globals"}:
            self.found = self.found or f".{node.attr.value}"


def introspection_in(node: cst.CSTNode) -> str | None:
    """What in `node` could observe local names (locals(), eval, exec, frames), or None."""
    finder = _IntrospectionFinder()
    node.visit(finder)
    return finder.found


class _BindingScan(cst.CSTVisitor):
    """Every name bound anywhere in a module, in any scope, plus star-imports."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.star_import = False

    def _target(self, node: cst.CSTNode) -> None:
        for name in m.findall(node, m.Name()):
            self.bound.add(name.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._target(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._target(node.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bound.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bound.add(node.name.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.bound.add(node.name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.bound.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.bound.update(item.name.value for item in node.names)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            name = node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name):
                self.bound.add(name.value)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.star_import = True

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.bound.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.bound.add(node.name.value)


def rebound_names(module: cst.Module, code: str, names: Iterable[str]) -> str | None:
    """Why `names` (builtins a rewrite relies on) may not mean the builtins here, or None.

    Conservative and module-wide: a binding in any scope, or any ``import *``, counts.
    `code` is the module's source text, used for a cheap textual pre-check.
    """
    wanted = set(names)
    if not any(name in code for name in wanted) and not _STAR_IMPORT.search(code):
        return None
    scan = _BindingScan()
    module.visit(scan)
    hit = sorted(wanted & scan.bound)
    if hit:
        return f"{', '.join(hit)} rebound in this module"
    if scan.star_import:
        return "a star-import may rebind " + ", ".join(sorted(wanted))
    return None


# `not` binds tighter than these; a comparison would parse, but `not a < b` misleads readers.
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
    node.visit(finder)
    return finder.found
