"""Fast read-only traversal of LibCST trees (targeted rewriting: `replace.py`).

`CSTNode.visit` rebuilds every node it passes (even for a read-only visitor), which costs as
much as parsing. Reading dataclass fields directly is about 8x cheaper, and rewriting only the
ancestors of the nodes that change makes `apply` proportional to the number of sites, not the
size of the file. Semantics follow LibCST: `visit_X` returning False skips children but
`leave_X` still runs; a rewrite sees its already-rewritten children (bottom-up).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import libcst as cst

SEQUENCE_TYPES = (tuple, list)


def _all_node_types() -> frozenset[type]:
    seen: set[type] = set()
    todo = [cst.CSTNode]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return frozenset(seen)


# CSTNode is an ABC: isinstance() against it is slow; membership in this set is not.
NODE_TYPES = _all_node_types()
# Leaves and whitespace: nothing a transformation looks for lives below these.
OPAQUE_TYPES = frozenset(
    {
        cst.SimpleWhitespace,
        cst.ParenthesizedWhitespace,
        cst.Newline,
        cst.Comment,
        cst.EmptyLine,
        cst.TrailingWhitespace,
    }
)
# Fields that only ever hold whitespace or punctuation tokens.
_TOKEN_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "leading_lines",
        "trailing_whitespace",
        "header",
        "footer",
        "lines_after_decorators",
        "newline",
        "equal",
        "colon",
        "dot",
        "star",
        "whitespace_before",
        "whitespace_after",
        "whitespace_before_colon",
        "whitespace_after_colon",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "whitespace_after_def",
        "whitespace_after_class",
        "whitespace_before_params",
        "whitespace_after_if",
        "whitespace_after_for",
        "whitespace_before_in",
        "whitespace_after_in",
        "whitespace_after_while",
        "whitespace_after_try",
        "whitespace_after_except",
        "whitespace_after_with",
        "whitespace_before_with_items",
        "whitespace_after_with_items",
        "whitespace_after_else",
        "whitespace_after_async",
        "whitespace_after_await",
        "whitespace_after_lambda",
        "whitespace_after_import",
        "whitespace_after_from",
        "whitespace_before_import",
        "whitespace_after_star",
        "whitespace_after_arg",
        "whitespace_after_return",
        "whitespace_after_raise",
        "whitespace_before_as",
        "whitespace_after_as",
        "whitespace_after_at",
        "whitespace_after_assert",
        "whitespace_after_del",
        "whitespace_after_global",
        "whitespace_after_nonlocal",
        "whitespace_after_yield",
        "whitespace_after_match",
        "whitespace_after_case",
    }
)
# Where statements live: a statement-level visitor never needs to look inside expressions.
_STATEMENT_FIELDS = frozenset({"body", "orelse", "handlers", "finalbody", "cases"})


@functools.cache
def child_fields(node_type: type, mode: str = "all") -> tuple[str, ...]:
    """Field names of a node type that may hold child nodes to visit, for a walk `mode`.

    "all": every field; "pruned": no whitespace/punctuation fields; "statements": only the
    fields that hold statements (for visitors that look at statements only).
    """
    names = _visit_order(node_type)
    if mode == "pruned":
        return tuple(n for n in names if n not in _TOKEN_FIELDS)
    if mode == "statements":
        if issubclass(node_type, (cst.BaseExpression, cst.BaseSmallStatement)):
            return ()
        return tuple(n for n in names if n in _STATEMENT_FIELDS)
    return names


@functools.cache
def _visit_order(node_type: type) -> tuple[str, ...]:
    """Fields in the order LibCST itself visits them (source order), read off its own method.

    Dataclass field order differs (a ClassDef declares `body` before `bases`), and site order
    decides labels and which sites a seeded selection takes, so it must be source order.
    """
    names = [f.name for f in dataclasses.fields(node_type)]
    try:
        source = inspect.getsource(node_type._visit_and_replace_children)
    except (OSError, TypeError):
        return tuple(names)
    # Each child is visited by a `visit_*(self, "field", ...)` call, in order. A field read into a local first
    # (`names = self.names` in ImportFrom, `format_spec = self.format_spec` in f-string expressions) is still
    # visited where its call stands, so the calls decide; bare `self.x` reads are the fallback.
    visited = re.findall(r"visit_\w+\(\s*self,\s*[\"'](\w+)[\"']", source) or re.findall(r"self\.(\w+)", source)
    ordered: list[str] = []
    for name in visited:
        if name in names and name not in ordered:
            ordered.append(name)
    return tuple(ordered + [n for n in names if n not in ordered])


def children(node: cst.CSTNode, mode: str = "all") -> Iterable[cst.CSTNode]:
    for name in child_fields(type(node), mode):
        value = getattr(node, name)
        if type(value) in NODE_TYPES:
            yield value
        elif type(value) in SEQUENCE_TYPES:
            yield from (v for v in value if type(v) in NODE_TYPES)


def nodes_within(root: cst.CSTNode, types: tuple[type, ...]) -> Iterator[cst.CSTNode]:
    """`root` and every node below it whose exact type is one of `types` (concrete node classes), as
    `libcst.matchers.findall` finds them, at a fraction of its cost; whitespace and punctuation are not searched."""
    wanted, stack = frozenset(types), [root]
    while stack:
        node = stack.pop()
        if type(node) in wanted:
            yield node
        stack.extend(reversed(list(children(node, "pruned"))))


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


def walk_mode(visitor_type: type) -> str:
    """The cheapest walk that still reaches every node type the visitor handles.

    A visitor class may declare ``WALK = "statements"`` when it only handles statements; otherwise
    whitespace fields are pruned unless it handles whitespace or token nodes itself.
    """
    declared = getattr(visitor_type, "WALK", None)
    if declared:
        return declared
    visits, leaves = dispatch(visitor_type)
    handled = set(visits) | set(leaves)
    tokenish = any(t in OPAQUE_TYPES or t.__module__.endswith(("whitespace", "op")) for t in handled)
    return "all" if tokenish else "pruned"


def walk(visitor: Any, root: cst.CSTNode, ancestors: list[cst.CSTNode] | None = None) -> None:
    """Call `visitor`'s visit_X/leave_X methods over `root`, keeping `ancestors` up to date."""
    visits, leaves = dispatch(type(visitor))
    mode = walk_mode(type(visitor))
    stack = ancestors if ancestors is not None else []
    node_types = NODE_TYPES

    def rec(node: cst.CSTNode) -> None:
        node_type = type(node)
        visit = visits.get(node_type)
        if (visit is None or visit(visitor, node) is not False) and node_type not in OPAQUE_TYPES:
            stack.append(node)
            for name in child_fields(node_type, mode):
                value = getattr(node, name)
                if type(value) in node_types:
                    rec(value)
                elif type(value) in SEQUENCE_TYPES:
                    for item in value:
                        if type(item) in node_types:
                            rec(item)
            stack.pop()
        leave = leaves.get(node_type)
        if leave is not None:
            leave(visitor, node)

    try:
        rec(root)
    finally:
        rec = None  # rec refers to itself: the cycle would keep the visitor and its tree for the cyclic collector
