"""Fast read-only traversal and targeted rewriting of LibCST trees.

`CSTNode.visit` rebuilds every node it passes (even for a read-only visitor), which costs as
much as parsing. Reading dataclass fields directly is about 8x cheaper, and rewriting only the
ancestors of the nodes that change makes `apply` proportional to the number of sites, not the
size of the file. Semantics follow LibCST: `visit_X` returning False skips children but
`leave_X` still runs; a rewrite sees its already-rewritten children (bottom-up).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst

_SEQUENCES = (tuple, list)
# Leaves and whitespace: nothing a transformation looks for lives below these.
_OPAQUE = frozenset(
    {
        cst.SimpleWhitespace,
        cst.ParenthesizedWhitespace,
        cst.Newline,
        cst.Comment,
        cst.EmptyLine,
        cst.TrailingWhitespace,
    }
)


@functools.cache
def child_fields(node_type: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(node_type))


def children(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    for name in child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif type(value) in _SEQUENCES:
            yield from (v for v in value if isinstance(v, cst.CSTNode))


@functools.cache
def dispatch(visitor_type: type) -> tuple[dict[type, Callable], dict[type, Callable]]:
    """visit_X / leave_X methods a visitor class really defines (not CSTVisitor's no-ops)."""
    visits, leaves = {}, {}
    for attr in dir(visitor_type):
        prefix, _, name = attr.partition("_")
        node_type = getattr(cst, name, None)
        if prefix not in ("visit", "leave") or not (isinstance(node_type, type) and issubclass(node_type, cst.CSTNode)):
            continue
        method = getattr(visitor_type, attr)
        if method is getattr(cst.CSTVisitor, attr, None):
            continue
        (visits if prefix == "visit" else leaves)[node_type] = method
    return visits, leaves


def walk(visitor: Any, root: cst.CSTNode, ancestors: list[cst.CSTNode] | None = None) -> None:
    """Call `visitor`'s visit_X/leave_X methods over `root`, keeping `ancestors` up to date."""
    visits, leaves = dispatch(type(visitor))
    stack = ancestors if ancestors is not None else []

    def rec(node: cst.CSTNode) -> None:
        node_type = type(node)
        visit = visits.get(node_type)
        if (visit is None or visit(visitor, node) is not False) and node_type not in _OPAQUE:
            stack.append(node)
            for name in child_fields(node_type):
                value = getattr(node, name)
                if isinstance(value, cst.CSTNode):
                    rec(value)
                elif type(value) in _SEQUENCES:
                    for item in value:
                        if isinstance(item, cst.CSTNode):
                            rec(item)
            stack.pop()
        leave = leaves.get(node_type)
        if leave is not None:
            leave(visitor, node)

    rec(root)


Rewrite = Callable[[cst.CSTNode, cst.CSTNode], "cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel"]


def replace_nodes(root: cst.CSTNode, rewrites: dict[int, Rewrite], paths: Iterable[Iterable[cst.CSTNode]]):
    """Rebuild only along `paths` (ancestor chains of the rewritten nodes), bottom-up.

    `rewrites` maps id(original node) -> f(original, updated) returning the replacement;
    inside a sequence a FlattenSentinel splices and a RemovalSentinel drops the element.
    """
    dirty = {id(node) for path in paths for node in path}

    def rec(node: cst.CSTNode):
        updated = node
        if id(node) in dirty:
            changes = {}
            for name in child_fields(type(node)):
                value = getattr(node, name)
                new = _rebuild_field(value, rec, dirty, rewrites)
                if new is not value:
                    changes[name] = new
            if changes:
                updated = node.with_changes(**changes)
        rewrite = rewrites.get(id(node))
        return rewrite(node, updated) if rewrite is not None else updated

    return rec(root)


def _rebuild_field(value, rec, dirty, rewrites):
    if isinstance(value, cst.CSTNode):
        if id(value) in dirty or id(value) in rewrites:
            new = rec(value)
            if isinstance(new, (cst.FlattenSentinel, cst.RemovalSentinel)):
                raise TypeError(f"cannot splice into single-node field holding {type(value).__name__}")
            return new
        return value
    if type(value) not in _SEQUENCES or not any(id(v) in dirty or id(v) in rewrites for v in value):
        return value
    items: list = []
    for item in value:
        new = rec(item) if id(item) in dirty or id(item) in rewrites else item
        if isinstance(new, cst.FlattenSentinel):
            items.extend(new.nodes)
        elif not isinstance(new, cst.RemovalSentinel):
            items.append(new)
    return type(value)(items)


def ancestor_paths(root: cst.CSTNode, targets: Iterable[cst.CSTNode]) -> dict[int, tuple[cst.CSTNode, ...]]:
    """id(target) -> its ancestors from `root` (excluding itself), found in one fast walk."""
    wanted = {id(t) for t in targets}
    paths: dict[int, tuple[cst.CSTNode, ...]] = {}
    stack: list[cst.CSTNode] = []

    def rec(node: cst.CSTNode) -> None:
        if id(node) in wanted:
            paths[id(node)] = tuple(stack)
        if type(node) in _OPAQUE or len(paths) == len(wanted):
            return
        stack.append(node)
        for child in children(node):
            rec(child)
        stack.pop()

    rec(root)
    return paths
