"""Every binding of every name in a module, noted by the site collector's own walk (no second walk of the tree).

A binding is a kind (`UNINFERABLE`, `NOT_A_NUMBER`, `UNKNOWN`), the value a name is assigned, or a part of one
(unpacked, iterated, entered), each with the scope it was made in: the module (0), or a def, class or lambda. A
site carries the scopes that enclose it (`data["scopes"]`), so that `unprovable.py` can judge a leaf by the bindings
a lookup from there could reach, not those of every other function of the file. Comprehensions are not scopes here:
their targets count as their enclosing scope's, which only ever adds bindings to a judgement.
"""

from __future__ import annotations

import sys

import libcst as cst

from repoanchor.perturb.bindings import dotted_name
from repoanchor.perturb.sites import Site, SiteCollector

UNINFERABLE, NOT_A_NUMBER, UNKNOWN = "uninferable", "not a number", "unknown"


class Part:
    """A binding to a part of a value: unpacked from it (``a, b = value``) or iterated over it (``for a in value``)."""

    __slots__ = ("value",)

    def __init__(self, value: cst.BaseExpression) -> None:
        self.value = value


Binding = str | cst.BaseExpression | Part


class BindingsCollector(SiteCollector):
    """A site collector that also notes every binding of every name in the module, any scope (a kind, the value
    assigned, or a part of one), in the same walk: a subclass must walk the whole module (no `visit_` returning
    False), or a binding it skips could make a site look unprovable."""

    def __init__(self) -> None:
        super().__init__()
        self.bindings: dict[str, list[tuple[int, Binding]]] = {}
        """name -> (scope, binding) for each binding of it, in walk order."""
        self.declared: set[str] = set()
        """Names in a `global` or `nonlocal` statement: bound in one scope, seen in another."""
        self.star_import = False
        self._kinds: list[str] = []  # "class" or "function" for each enclosing definition, innermost last
        self._scopes: list[int] = [0]
        self._made = 0

    def add(self, node: cst.CSTNode, **data) -> Site:
        return super().add(node, scopes=frozenset(self._scopes), **data)

    def _bind(self, name: str, what: Binding) -> None:
        self.bindings.setdefault(name, []).append((self._scopes[-1], what))

    def _enter(self, kind: str | None) -> None:
        """A new scope (a lambda's has no kind: it does not change whether the next def is a method)."""
        self._made += 1
        self._scopes.append(self._made)
        if kind:
            self._kinds.append(kind)

    def _targets(self, target: cst.BaseExpression, what: Binding) -> None:
        """Names a target binds (an attribute or subscript target binds none), unpacked ones to parts of `what`."""
        if isinstance(target, cst.Name):
            self._bind(target.value, what)
        elif isinstance(target, (cst.Tuple, cst.List, cst.StarredElement)):
            part = what if isinstance(what, (str, Part)) else Part(what)
            for element in target.elements if not isinstance(target, cst.StarredElement) else [target]:
                self._targets(element.value, UNKNOWN if isinstance(part, str) else part)

    def _parameters(self, params: cst.Parameters, method: bool) -> None:
        """Astroid infers a parameter as its default, if any, then Uninferable; a method's first one as its class
        or an instance (unknown here: ``self.size`` may be a number); ``*args`` and ``**kwargs`` as a tuple, a dict."""
        named = [*params.posonly_params, *params.params, *params.kwonly_params]
        for index, param in enumerate(named):
            self._bind(param.name.value, UNKNOWN if method and index == 0 else UNINFERABLE)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._bind(star.name.value, NOT_A_NUMBER)

    def _in_class(self) -> bool:
        return bool(self._kinds) and self._kinds[-1] == "class"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool | None:
        # Its decorators and defaults are walked inside its scope: a judgement then counts its bindings too (more
        # bindings only ever leave a site to astroid).
        self._bind(node.name.value, NOT_A_NUMBER)
        method = self._in_class()
        self._enter("function")
        self._parameters(node.params, method=method)
        return super().visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._kinds.pop()
        self._scopes.pop()
        super().leave_FunctionDef(original_node)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        method = self._in_class()
        self._enter(None)
        self._parameters(node.params, method=method)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._scopes.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> bool | None:
        self._bind(node.name.value, NOT_A_NUMBER)
        self._enter("class")
        return super().visit_ClassDef(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._kinds.pop()
        self._scopes.pop()
        super().leave_ClassDef(original_node)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            path = dotted_name(alias.name) or ""
            local = alias.asname.name.value if alias.asname else path.split(".")[0]
            self._bind(local, UNINFERABLE if foreign_module(path) else UNKNOWN)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.star_import = True
            return
        path = (dotted_name(node.module) or "") if node.module else ""
        kind = UNINFERABLE if node.relative or foreign_module(path) else UNKNOWN
        for alias in node.names:
            self._bind(alias.asname.name.value if alias.asname else dotted_name(alias.name) or "", kind)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._targets(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target, node.value if node.value is not None else UNKNOWN)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target, UNKNOWN)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target, Part(node.iter))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._targets(node.target, Part(node.iter))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._targets(node.asname.name, Part(node.item))  # what the item's __enter__ returns

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._targets(node.name.name, UNKNOWN)

    visit_ExceptStarHandler = visit_ExceptHandler  # `except*` binds its name as `except` does

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name.value, UNKNOWN)
            self.declared.add(item.name.value)

    visit_Nonlocal = visit_Global  # `builtin_numbers` makes nonlocal names Uninferable; unknown here either way

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name.value, UNKNOWN)

    visit_MatchStar = visit_MatchAs  # `case [*rest]` binds `rest` as `case x` binds `x`

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._bind(node.rest.value, UNKNOWN)

    def visit_TypeParam(self, node: cst.TypeParam) -> None:
        self._bind(node.param.name.value, UNKNOWN)  # a TypeVar, TypeVarTuple or ParamSpec


def foreign_module(path: str) -> bool:
    """Whether dotted module `path` lies outside the standard library: `builtin_numbers` makes what it imports
    Uninferable, and the bindings here call it Uninferable by the same test."""
    return path.partition(".")[0] not in sys.stdlib_module_names
