"""Statically nested blocks: a pass that wraps or nests code may not take a scope to 20 nested blocks.

CPython refuses a 20th nested loop, ``try`` or ``with`` in one function ("too many statically nested blocks";
the compile check would roll the whole file back), and parso, which jedi and IPython analyse code with, counts
``if`` too: parso's own tests parse its source under every grammar and expect no error, and the 14 SPTs stacked at
phi = 1.0 wrapped blocks inside blocks until 20 files of parso held such scopes. So the stricter count rules here:
per scope (the module, each class and function body, as parso keeps its contexts), the ``if`` (an ``elif``
chain is one), ``for``, ``while``, ``try`` and ``with`` statements around a statement. Where a pass takes a scope
to `MAX_NESTED` + 1 or more, and past what its input held, the pass is redone without that scope's sites
(`engine`), each refused saying why.
"""

from __future__ import annotations

import libcst as cst

MAX_NESTED = 19
"""Nested blocks a scope may hold: parso reports the 20th."""
_COUNTED = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.With)
_SCOPES = (cst.FunctionDef, cst.ClassDef)
TOO_DEEP = f"too deep: the rewrite would nest more than {MAX_NESTED} blocks in this scope (parso's limit)"


def scope_depths(module: cst.Module) -> dict[str, int]:
    """Scope label (as `SiteCollector` names it: ``<module>``, ``Class.method``) -> its deepest nesting."""
    depths: dict[str, int] = {"<module>": 0}
    _walk(module.body, "", 0, depths)
    return depths


def too_deep(before: cst.Module, after: cst.Module) -> set[str]:
    """Scopes that `after` nests past `MAX_NESTED` blocks, and deeper than `before` did."""
    deep = {scope: depth for scope, depth in scope_depths(after).items() if depth > MAX_NESTED}
    old = scope_depths(before) if deep else {}  # rarely needed: read only where a scope is past the limit
    return {scope for scope, depth in deep.items() if depth > old.get(scope, 0)}


def scope_of(where: str) -> str:
    """The scope part of a site's label (``Parser.parse/If#2`` -> ``Parser.parse``)."""
    return where.rpartition("/")[0]


def _walk(statements, scope: str, depth: int, depths: dict[str, int]) -> None:
    label = scope or "<module>"
    for statement in statements:
        if isinstance(statement, _SCOPES):
            inner = f"{scope}.{statement.name.value}" if scope else statement.name.value
            depths.setdefault(inner, 0)
            _walk(_body(statement.body), inner, 0, depths)
            continue
        here = depth + 1 if isinstance(statement, _COUNTED) else depth
        if here > depths.get(label, 0):
            depths[label] = here
        for block in _blocks(statement):
            _walk(_body(block), scope, here, depths)


def _blocks(statement: cst.CSTNode) -> list[cst.BaseSuite]:
    """The suites a compound statement holds at its own level: its body, each handler or case, ``else``,
    ``finally``, and an ``elif``'s (one ``if`` statement with the ``if`` it continues)."""
    found = []
    node = statement
    while isinstance(node, (*_COUNTED, cst.Else)):  # `orelse` leads on to an elif's `If` or an `else`
        found.append(node.body)
        for handler in getattr(node, "handlers", ()):
            found.append(handler.body)
        if final := getattr(node, "finalbody", None):
            found.append(final.body)
        node = getattr(node, "orelse", None)
    if isinstance(statement, cst.Match):
        found.extend(case.body for case in statement.cases)
    return found


def _body(suite: cst.BaseSuite) -> list:
    return list(suite.body) if isinstance(suite, cst.IndentedBlock) else []
