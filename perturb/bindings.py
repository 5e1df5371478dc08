"""Names a module binds, and where its imports bind them: whether a builtin a rewrite relies on may be rebound,
and which dotted path each imported name stands for (standard-library objects resolved, nothing else imported)."""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from repoanchor.perturb.traversal.walk import nodes_within, walk

_STAR_IMPORT = re.compile(r"import\s+\*")


class _BindingScan(cst.CSTVisitor):
    """Every name bound anywhere in a module, in any scope, plus star-imports."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.star_import = False

    def _target(self, node: cst.CSTNode) -> None:
        for name in nodes_within(node, (cst.Name,)):
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
    walk(scan, module)
    hit = sorted(wanted & scan.bound)
    if hit:
        return f"{', '.join(hit)} rebound in this module"
    if scan.star_import:
        return "a star-import may rebind " + ", ".join(sorted(wanted))
    return None


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """``a.b.C`` for a name or an attribute chain of names, else None."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        head = dotted_name(expr.value)
        return f"{head}.{expr.attr.value}" if head else None
    return None


class _ImportScan:
    WALK = "statements"  # an import is a statement: never inside an expression

    def __init__(self) -> None:
        self.imports: list[cst.Import | cst.ImportFrom] = []

    def visit_Import(self, node: cst.Import) -> None:
        self.imports.append(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.imports.append(node)


def import_origins(module: cst.Module) -> dict[str, set[str]]:
    """Local name -> the dotted paths an import anywhere in `module` binds it to.

    ``import a.b`` binds ``a`` to ``a``; ``from .m import x as y`` binds ``y`` to ``.m.x``
    (relative paths keep their leading dots). Star-imports bind nothing known.
    """
    scan = _ImportScan()
    walk(scan, module)
    origins: dict[str, set[str]] = {}
    for node in scan.imports:
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            continue
        prefix = ""
        if isinstance(node, cst.ImportFrom):
            prefix = "." * len(node.relative) + ((dotted_name(node.module) if node.module else None) or "")
            prefix = prefix if prefix.endswith(".") else prefix + "."
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            from_import = isinstance(node, cst.ImportFrom)
            local = alias.asname.name.value if alias.asname else name if from_import else name.split(".")[0]
            origin = prefix + name if from_import else name if alias.asname else local
            origins.setdefault(local, set()).add(origin)
    return origins


def stdlib_object(path: str) -> object | None:
    """The object at dotted `path` when its top-level package is in the standard library, else None.

    Imports only standard-library modules (never project or third-party code, which could run
    anything), skipping those whose import has visible effects (``this`` prints, ``antigravity``
    opens a browser, ``idlelib.idle`` starts IDLE).
    """
    import importlib
    import sys
    import warnings

    parts = path.split(".")
    noisy = {"antigravity", "this", "idlelib", "__hello__", "__phello__"}
    if parts[0] not in sys.stdlib_module_names or parts[0] in noisy:
        return None
    for cut in range(len(parts), 0, -1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated stdlib modules warn on import
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


def bound_names(module: cst.Module) -> tuple[set[str], bool]:
    """Every name bound anywhere in `module` (any scope, as `rebound_names` counts them), and
    whether it has a star-import: one scan answers many questions about the same module."""
    scan = _BindingScan()
    walk(scan, module)
    return scan.bound, scan.star_import


def unless_rebound(module: cst.Module, ctx, sites: list, names: Iterable[str]) -> list:
    """`sites`, or none (each skipped with the reason) when the builtins a rewrite relies on may be rebound."""
    reason = rebound_names(module, ctx.code, names) if sites else None
    if not reason:
        return sites
    for site in sites:
        ctx.skip(f"rebound builtin: {reason}", site)
    return []
