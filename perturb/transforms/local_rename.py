"""local-rename: a function-local variable gets a fresh, plausible name everywhere it is used.

A name bound by plain targets inside a ``def`` (``=``, ``+=``, annotated assignment, walrus,
``for``/``with``/``except`` targets) is renamed at every binding and every read, including
``del``, match captures of the same name, and reads from nested functions, lambdas,
comprehensions and class bodies (closures). LibCST's ScopeProvider supplies bindings and
references (a name bound only by match captures is invisible to it and left alone).
Refused, with the reason class in brackets:

- [parameter] callers may pass it by keyword, and ``inspect.signature`` shows it;
- [global/nonlocal] it is declared ``global`` or ``nonlocal`` anywhere in the module, so the
  binding lives in, or is shared with, another scope (checked module-wide: simple and safe);
- [rebound in nested scope] a nested scope binds the same name (nested def, lambda or
  comprehension variable, class attribute, walrus inside a comprehension): LibCST resolves
  those cases unreliably (a class body's ``y = y`` reads the global, not the closure);
- [binding kind] it is bound by an import, ``def`` or ``class``: renaming would change an
  import statement or an object's ``__name__``;
- [introspection] the function, or anything nested in it, calls ``locals()``, ``vars()``,
  ``eval``, ``exec``, ``dir()`` or inspects frames: those observe names as strings;
- [self-documenting f-string] it appears in ``{x=}``, whose output contains the name's text;
- [string annotation] a string annotation names it (the string would need rewriting too);
- [unresolved reference] some occurrence in the function could not be tied to this binding
  (e.g. a match capture LibCST records as a read), so a consistent rename is not guaranteed;
- [private name] it starts with ``__`` (class-private mangling);
- [builtin name] it shadows a builtin: kept out, as the prior art did, to leave deliberate
  shadowing alone.

The new name comes from ``naming.fresh_name`` against every identifier in the file, so it can
neither shadow nor be shadowed by anything.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from functools import partial

import libcst as cst
from libcst.metadata import FunctionScope, Scope, ScopeProvider

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.naming import fresh_name, identifiers_in
from repoanchor.perturb.sites import Site, SiteCollector
from repoanchor.perturb.transform_checks import introspection_in
from repoanchor.perturb.walk import ancestor_paths, replace_nodes, walk

BUILTIN_NAMES = frozenset(dir(builtins))


class _Occurrences:
    """Names under a node in source order, and those inside ``{...=}``."""

    def __init__(self) -> None:
        self.names: list[cst.Name] = []
        self.self_documenting: set[int] = set()
        self._in_selfdoc = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)
        if self._in_selfdoc:
            self.self_documenting.add(id(node))

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self._in_selfdoc += node.equal is not None

    def leave_FormattedStringExpression(self, original_node: cst.FormattedStringExpression) -> None:
        self._in_selfdoc -= original_node.equal is not None


class _Declarations:
    """Names declared ``global`` or ``nonlocal``: statements, so the walk never enters an expression."""

    WALK = "statements"

    def __init__(self) -> None:
        self.declared: set[str] = set()

    def visit_Global(self, node: cst.Global) -> None:
        self.declared.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared.update(item.name.value for item in node.names)


def _occurrences(node: cst.CSTNode) -> _Occurrences:
    found = _Occurrences()
    walk(found, node)
    return found


def _declared(module: cst.Module) -> set[str]:
    found = _Declarations()
    walk(found, module)
    return found.declared


def _spelling(node: cst.CSTNode) -> cst.CSTNode:
    """The Name that spells a binding, which fixes its source order."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Param)):
        return node.name
    names = [node] if isinstance(node, cst.Name) else _occurrences(node).names
    return names[0] if names else node


class _Collector(SiteCollector):
    def __init__(self, module: cst.Module, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        scopes = {s for s in ctx.resolve(ScopeProvider, module).values() if s is not None}
        self.function_scopes = {id(s.node): s for s in scopes if isinstance(s, FunctionScope)}
        self.children: dict[int, list[Scope]] = {}
        for scope in scopes:
            if scope.parent is not scope:
                self.children.setdefault(id(scope.parent), []).append(scope)
        self.declared = _declared(module)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        super().visit_FunctionDef(node)
        scope = self.function_scopes.get(id(node))
        if scope is not None:
            self._collect(node, scope)
        return True

    def _nested(self, scope: Scope) -> list[Scope]:
        found, stack = [], list(self.children.get(id(scope), []))
        while stack:
            inner = stack.pop()
            found.append(inner)
            stack.extend(self.children.get(id(inner), []))
        return found

    def _collect(self, func: cst.FunctionDef, scope: Scope) -> None:
        occurrences = _occurrences(func)
        order = {id(n): i for i, n in enumerate(occurrences.names)}

        def position(assignment) -> tuple[int, str]:
            return order.get(id(_spelling(assignment.node)), len(order)), assignment.name

        ordered = sorted({a.name for a in scope.assignments}, key=lambda n: min(map(position, scope.assignments[n])))
        if not ordered:
            return
        found = introspection_in(func)
        if found:
            self.ctx.skip(f"introspection: {found} can observe local names", self.label(func))
            return
        nested, selfdoc = self._nested(scope), occurrences.self_documenting
        for name in ordered:
            bindings = sorted(scope.assignments[name], key=position)
            targets = {id(n): n for n in [a.node for a in bindings] + [r.node for a in bindings for r in a.references]}
            reason = self._refusal(name, bindings, targets.keys(), [scope, *nested], selfdoc)
            if reason:
                self.ctx.skip(reason, self.label(bindings[0].node))
            else:
                self.add(bindings[0].node, targets=tuple(targets.values()))

    def _refusal(self, name: str, bindings: list, targets, scopes: list[Scope], selfdoc: set[int]):
        kinds = {type(a.node).__name__ for a in bindings if not isinstance(a.node, cst.Name)}
        if name in self.declared:
            return f"global/nonlocal: {name} is declared global or nonlocal in this module"
        if name.startswith("__"):
            return f"private name: {name} would be mangled inside classes"
        if name in BUILTIN_NAMES:
            return f"builtin name: {name} shadows a builtin"
        if "Param" in kinds:
            return f"parameter: {name} can be passed by keyword"
        if kinds:
            return f"binding kind: {name} is bound by {', '.join(sorted(kinds))}"
        if any(scope.assignments[name] for scope in scopes[1:]):
            return f"rebound in nested scope: {name}"
        if any(not isinstance(r.node, cst.Name) for a in bindings for r in a.references):
            return f"string annotation: a string annotation refers to {name}"
        if any(id(access.node) not in targets for scope in scopes for access in scope.accesses[name]):
            return f"unresolved reference: an occurrence of {name} is not tied to this binding"
        if selfdoc.intersection(targets):
            return f"self-documenting f-string: {{{name}=}} prints the name"
        return None


def _rename(new_name: str, site: Site | None, ctx: FileContext, original: cst.Name, updated: cst.Name) -> cst.Name:
    renamed = updated.with_changes(value=new_name)
    if site is not None:
        ctx.changed(site, original, renamed)
    return renamed


class LocalRename:
    id = "local-rename"
    family = "spt"
    description = "Rename a function-local variable consistently, closures included, to a fresh name."
    keyword_bound = False

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        return _Collector(module, ctx).collect(module)

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: FileContext) -> cst.Module:
        taken, rewrites = identifiers_in(ctx.code), {}
        for site in sites:
            new_name = fresh_name(ctx.rng, taken)
            for target in site.data["targets"]:
                rewrites[id(target)] = partial(_rename, new_name, site if target is site.node else None, ctx)
        targets = [target for site in sites for target in site.data["targets"]]
        return replace_nodes(module, rewrites, ancestor_paths(module, targets).values())
