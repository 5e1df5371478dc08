"""Read-only visits without LibCST's node rebuilding, for metadata providers (ScopeProvider).

`CSTNode.visit` rebuilds every node it passes even for a read-only `CSTVisitor` (it constructs
and validates a copy of each parent), which makes a ScopeProvider resolution cost several
parses. Providers call `node.visit(self)` on sub-nodes themselves, so `walk.walk` cannot stand
in; inside `readonly_visits()` the method is swapped for one that makes the same calls in the
same order (on_visit, then per field on_visit_attribute / children / on_leave_attribute, then
on_leave) without building anything. The field plan of each node type is read off LibCST's own
`_visit_and_replace_children`; a type whose method does not fit the plan keeps LibCST's visit,
and so does every transformer (non-`CSTVisitor`) visit.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
from contextlib import contextmanager

import libcst as cst

from repoanchor.perturb.walk import NODE_TYPES

_ORIGINAL_VISIT = cst.CSTNode.visit
_CALL = re.compile(r"\bvisit_(\w+)\(")
_FIELD_CALL = re.compile(r"\bvisit_(required|optional|sentinel|sequence|body_sequence)\(\s*self,\s*\"(\w+)\",")
_SEQUENCES = (tuple, list)
_lock = threading.Lock()
_depth = 0


@functools.cache
def visit_plan(node_type: type) -> tuple[str, ...] | None:
    """Fields in the order LibCST visits them, or None when its method is not a plain list of
    `visit_<kind>(self, "<field>", ...)` calls (such a type keeps LibCST's own visit)."""
    try:
        source = inspect.getsource(node_type._visit_and_replace_children)
    except (OSError, TypeError):
        return None
    body = source.split("\n", 1)[1]
    calls = _CALL.findall(body)
    found = _FIELD_CALL.findall(body)
    if len(calls) != len(found):
        return None
    fields: list[str] = []
    for _kind, name in found:
        if name not in fields:
            fields.append(name)
    return tuple(fields)


def _fast_visit(self, visitor):
    if not isinstance(visitor, cst.CSTVisitor):
        return _ORIGINAL_VISIT(self, visitor)
    plan = visit_plan(type(self))
    if plan is None:
        return _ORIGINAL_VISIT(self, visitor)
    if visitor.on_visit(self):
        for name in plan:
            value = getattr(self, name)
            if value is None and name == "format_spec":
                continue  # LibCST skips an absent format spec without attribute callbacks
            visitor.on_visit_attribute(self, name)
            if type(value) in NODE_TYPES:
                value.visit(visitor)
            elif type(value) in _SEQUENCES:
                for child in value:
                    child.visit(visitor)
            visitor.on_leave_attribute(self, name)
    visitor.on_leave(self)
    return self


@contextmanager
def readonly_visits():
    """Within this block, read-only visits (any thread) skip node rebuilding; results are the same."""
    global _depth
    with _lock:
        if _depth == 0:
            cst.CSTNode.visit = _fast_visit
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                cst.CSTNode.visit = _ORIGINAL_VISIT
