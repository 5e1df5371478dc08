"""Read-only visits without LibCST's node rebuilding, for metadata providers (ScopeProvider).

`CSTNode.visit` rebuilds every node it passes even for a read-only `CSTVisitor` (it constructs
and validates a copy of each parent), which makes a ScopeProvider resolution cost several
parses. Providers call `node.visit(self)` on sub-nodes themselves, so `walk.walk` cannot stand
in; inside `readonly_visits()` the method is swapped for one that makes the same calls in the
same order (on_visit, then per field on_visit_attribute / children / on_leave_attribute, then
on_leave) without building anything. The field plan of each node type is read off LibCST's own
`_visit_and_replace_children`; a type whose method does not fit the plan keeps LibCST's visit,
and so does every transformer (non-`CSTVisitor`) visit. Callbacks that are LibCST's own no-op
stubs (typed `visit_X`, `leave_X`, `visit_X_field`...) are not called at all: calling them
changes nothing, and they were most of a visit's cost.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
import weakref
from contextlib import contextmanager

import libcst as cst
from libcst._batched_visitor import _BatchedCSTVisitor
from libcst._typed_visitor import CSTTypedVisitorFunctions

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


_ATTRIBUTE_HOOK = re.compile(r"^(?:visit|leave)_([A-Z]\w*?)_([a-z]\w*)$")
_ALL = None  # every attribute callback must be made: the visitor handles them itself


@functools.cache
def _is_readonly(visitor_type: type) -> bool:
    return issubclass(visitor_type, cst.CSTVisitor)  # an ABC check: slow per node, cheap per type


@functools.cache
def _typed_hooks(visitor_type: type) -> frozenset[tuple[str, str]] | None:
    """(node type name, field) pairs whose visit_/leave_ attribute method the class overrides; None (_ALL)
    when it overrides the attribute callbacks themselves. LibCST's stubs do nothing, so skipping them is exact."""
    base = cst.CSTVisitor
    if visitor_type.on_visit_attribute is not base.on_visit_attribute:
        return _ALL
    if visitor_type.on_leave_attribute is not base.on_leave_attribute:
        return _ALL
    pairs = set()
    for attr in dir(visitor_type):
        match = _ATTRIBUTE_HOOK.match(attr)
        if match and getattr(visitor_type, attr) is not getattr(CSTTypedVisitorFunctions, attr, None):
            pairs.add(match.groups())
    return frozenset(pairs)


_batched_hooks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _attribute_hooks(visitor) -> frozenset[tuple[str, str]] | None:
    """The attribute callbacks that do something for this visitor (a batched visitor's are its members')."""
    if type(visitor) is _BatchedCSTVisitor:
        hooks = _batched_hooks.get(visitor)
        if hooks is None:
            keys = (_ATTRIBUTE_HOOK.match(k) for k, methods in visitor.visitor_methods.items() if methods)
            hooks = _batched_hooks[visitor] = frozenset(match.groups() for match in keys if match)
        return hooks
    return _typed_hooks(type(visitor))


@functools.cache
def _own_callbacks(visitor_type: type, node_type: type) -> tuple | None:
    """(visit_X, leave_X) functions of a visitor class that uses CSTVisitor's own on_visit/on_leave, each
    None where LibCST's no-op stub stands (calling it changes nothing); None when the class overrides
    on_visit or on_leave (those are then called as LibCST calls them)."""
    base = cst.CSTVisitor
    if visitor_type.on_visit is not base.on_visit or visitor_type.on_leave is not base.on_leave:
        return None

    def real(name: str):
        method = getattr(visitor_type, f"{name}_{node_type.__name__}", None)
        return None if method is None or getattr(method, "_is_no_op", False) else method

    return real("visit"), real("leave")


def _enter(self, visitor) -> bool:
    own = _own_callbacks(type(visitor), type(self))
    if own is None:
        return visitor.on_visit(self)
    return own[0] is None or own[0](visitor, self) is not False


def _leave(self, visitor) -> None:
    own = _own_callbacks(type(visitor), type(self))
    if own is None:
        visitor.on_leave(self)
    elif own[1] is not None:
        own[1](visitor, self)


def _fast_visit(self, visitor):
    if not _is_readonly(type(visitor)):
        return _ORIGINAL_VISIT(self, visitor)
    plan = visit_plan(type(self))
    if plan is None:
        return _ORIGINAL_VISIT(self, visitor)
    if _enter(self, visitor):
        hooks, type_name = _attribute_hooks(visitor), type(self).__name__
        for name in plan:
            value = getattr(self, name)
            if value is None and name == "format_spec":
                continue  # LibCST skips an absent format spec without attribute callbacks
            called = hooks is _ALL or (type_name, name) in hooks
            if called:
                visitor.on_visit_attribute(self, name)
            if type(value) in NODE_TYPES:
                value.visit(visitor)
            elif type(value) in _SEQUENCES:
                for child in value:
                    child.visit(visitor)
            if called:
                visitor.on_leave_attribute(self, name)
    _leave(self, visitor)
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
