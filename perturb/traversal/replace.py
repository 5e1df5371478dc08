"""Targeted rewriting of LibCST trees: only the ancestors of the nodes that change are rebuilt, so a rewrite
costs in proportion to its sites, not to the file (`CSTNode.visit` with a transformer rebuilds every node). A
rewrite sees its already-rewritten children (bottom-up), as in LibCST."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import libcst as cst

from repoanchor.perturb.traversal.walk import NODE_TYPES, OPAQUE_TYPES, SEQUENCE_TYPES, child_fields, children

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

    try:
        return rec(root)
    finally:
        rec = None  # rec refers to itself: the cycle would keep both trees for the cyclic collector


def _rebuild_field(value, rec, dirty, rewrites):
    if type(value) in NODE_TYPES:
        if id(value) in dirty or id(value) in rewrites:
            new = rec(value)
            if isinstance(new, (cst.FlattenSentinel, cst.RemovalSentinel)):
                raise TypeError(f"cannot splice into single-node field holding {type(value).__name__}")
            return new
        return value
    if type(value) not in SEQUENCE_TYPES or not any(id(v) in dirty or id(v) in rewrites for v in value):
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
    """id(target) -> the ancestors (from `root`, excluding itself) of every place it occurs.

    A node object may occur more than once in a tree (a transformation can insert the same
    object twice); the ancestors of all occurrences are returned so `replace_nodes` rewrites each.
    """
    wanted = {id(t) for t in targets}
    paths: dict[int, tuple[cst.CSTNode, ...]] = {}
    stack: list[cst.CSTNode] = []

    def rec(node: cst.CSTNode) -> None:
        if id(node) in wanted:
            paths[id(node)] = paths.get(id(node), ()) + tuple(stack)
        if type(node) in OPAQUE_TYPES:
            return
        stack.append(node)
        for child in children(node, "pruned"):
            rec(child)
        stack.pop()

    try:
        rec(root)
    finally:
        rec = None  # rec refers to itself: the cycle would keep the tree for the cyclic collector
    return paths
