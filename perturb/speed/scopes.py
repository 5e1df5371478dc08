"""LibCST's ScopeProvider without its ExpressionContextProvider pass (about half of a scope resolution).

ScopeProvider asks ExpressionContextProvider one question per Name: is it bound here (STORE)? Every
other answer (LOAD, DEL, none) makes the same access. `stored_names` answers that question in one plain
walk under the rules of LibCST's ExpressionContextVisitor: targets of assignments, `for` loops and
comprehensions, `as` names, walrus targets, function and class names and parameters are bound, never
through an attribute's object or a subscript, and the children that visitor skips (an attribute's name,
type parameters) stay unbound. `resolve_scopes` hands the answer to ScopeProvider in place of the pass,
where this LibCST's ScopeProvider depends on that provider alone; otherwise it resolves as LibCST does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, ScopeProvider

from repoanchor.perturb.speed.fastvisit import readonly_visits
from repoanchor.perturb.walk import children

_Push = Callable[[cst.CSTNode, bool], None]


def _assign(node: cst.Assign, store: bool, push: _Push) -> None:
    for target in node.targets:
        push(target, True)
    push(node.value, store)


def _ann_assign(node: cst.AnnAssign, store: bool, push: _Push) -> None:
    push(node.target, True)
    push(node.annotation, store)
    if node.value:
        push(node.value, store)


def _target_value(node: cst.AugAssign | cst.NamedExpr, store: bool, push: _Push) -> None:
    push(node.target, True)
    push(node.value, store)


def _comp_for(node: cst.CompFor, store: bool, push: _Push) -> None:
    push(node.target, True)
    push(node.iter, store)
    for condition in node.ifs:
        push(condition, store)
    if node.inner_for_in:
        push(node.inner_for_in, store)


def _for(node: cst.For, store: bool, push: _Push) -> None:
    push(node.target, True)
    push(node.iter, store)
    push(node.body, store)
    if node.orelse:
        push(node.orelse, store)


def _subscript(node: cst.Subscript, store: bool, push: _Push) -> None:
    push(node.value, False)
    for element in node.slice:
        push(element, False)


def _class(node: cst.ClassDef, store: bool, push: _Push) -> None:
    push(node.name, True)
    for child in (node.body, *node.bases, *node.keywords, *node.decorators):
        push(child, store)


def _function(node: cst.FunctionDef, store: bool, push: _Push) -> None:
    push(node.name, True)
    for child in (node.params, node.body, *node.decorators):
        push(child, store)
    if node.returns:
        push(node.returns, store)


def _param(node: cst.Param, store: bool, push: _Push) -> None:
    push(node.name, True)
    for child in (node.annotation, node.default):
        if child:
            push(child, store)


# Node types ExpressionContextVisitor handles itself; every other node passes its context to all children.
_RULES: dict[type, Callable[[cst.CSTNode, bool, _Push], None]] = {
    cst.Assign: _assign,
    cst.AnnAssign: _ann_assign,
    cst.AugAssign: _target_value,
    cst.NamedExpr: _target_value,
    cst.AsName: lambda node, store, push: push(node.name, True),
    cst.CompFor: _comp_for,
    cst.For: _for,
    cst.Del: lambda node, store, push: push(node.target, False),
    cst.Attribute: lambda node, store, push: push(node.value, False),
    cst.Subscript: _subscript,
    cst.ClassDef: _class,
    cst.FunctionDef: _function,
    cst.Param: _param,
}


def stored_names(module: cst.Module) -> set[cst.Name]:
    """The Name nodes ExpressionContextProvider gives the STORE context."""
    stored: set[cst.Name] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
    push = lambda node, store: stack.append((node, store))  # noqa: E731
    while stack:
        node, store = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            if store:
                stored.add(node)
        elif kind in _RULES:
            _RULES[kind](node, store, push)
        else:
            stack.extend((child, store) for child in children(node))
    return stored


class _Contexts(Mapping):
    """STORE for the stored names, LOAD for any other node: all ScopeProvider tells apart."""

    def __init__(self, stored: set[cst.Name]) -> None:
        self._stored = stored

    def __getitem__(self, node: cst.CSTNode) -> ExpressionContext:
        return ExpressionContext.STORE if node in self._stored else ExpressionContext.LOAD

    def get(self, node: cst.CSTNode, default: object = None) -> ExpressionContext:
        return self[node]

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)


SHORTCUT = tuple(ScopeProvider.METADATA_DEPENDENCIES) == (ExpressionContextProvider,)


def resolve_scopes(wrapper: cst.MetadataWrapper) -> Mapping[cst.CSTNode, object]:
    """`wrapper.resolve(ScopeProvider)`, the expression contexts from `stored_names` when none are resolved."""
    metadata = getattr(wrapper, "_metadata", None)  # LibCST's private cache of resolved providers
    untouched = isinstance(metadata, dict) and not {ExpressionContextProvider, ScopeProvider} & metadata.keys()
    shortcut = SHORTCUT and untouched
    if shortcut:
        metadata[ExpressionContextProvider] = _Contexts(stored_names(wrapper.module))
    try:
        with readonly_visits():
            return wrapper.resolve(ScopeProvider)
    finally:
        if shortcut:  # only ScopeProvider may see these contexts: a later resolve gets LibCST's own
            metadata.pop(ExpressionContextProvider, None)
