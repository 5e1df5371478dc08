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
import textwrap
import weakref
from collections.abc import Callable

import libcst as cst
from libcst._batched_visitor import _BatchedCSTVisitor
from libcst._typed_visitor import CSTTypedVisitorFunctions
from libcst.metadata import scope_provider

from repoanchor.perturb.speed.patching import ClassPatch
from repoanchor.perturb.walk import NODE_TYPES

_ORIGINAL_VISIT = cst.CSTNode.visit
_CALL = re.compile(r"\bvisit_(\w+)\(")
_FIELD_CALL = re.compile(r"\bvisit_(required|optional|sentinel|sequence|body_sequence)\(\s*self,\s*\"(\w+)\",")
_SEQUENCES = (tuple, list)


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
_UNPLANNED = object()
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


def _by_on_visit(visitor, node) -> bool:
    return bool(visitor.on_visit(node))


def _by_on_leave(visitor, node) -> None:
    visitor.on_leave(node)


def _always(visitor, node) -> bool:
    return True


def _nothing(visitor, node) -> None:
    return None


def _calling(visit) -> Callable:
    def enter(visitor, node) -> bool:
        return visit(visitor, node) is not False

    return enter


def _make_plan(visitor, node_type: type) -> tuple | None:
    """How `visitor` visits a `node_type`: (enter, leave, ((field, attribute callbacks?), ...)), or None
    when LibCST's own visit must run (a transformer, or a node type whose method does not fit the plan)."""
    fields = visit_plan(node_type)
    if fields is None or not _is_readonly(type(visitor)):
        return None
    own = _own_callbacks(type(visitor), node_type)
    if type(visitor) is _BatchedCSTVisitor:
        enter, leave = _batched_callbacks(visitor, node_type.__name__)
    elif own is None:
        enter, leave = _by_on_visit, _by_on_leave
    else:
        enter = _always if own[0] is None else _calling(own[0])
        leave = _nothing if own[1] is None else own[1]
    hooks = _attribute_hooks(visitor)
    called = tuple((name, hooks is _ALL or (node_type.__name__, name) in hooks) for name in fields)
    return enter, leave, called


def _batched_callbacks(visitor: _BatchedCSTVisitor, type_name: str) -> tuple[Callable, Callable]:
    """A batched visitor's on_visit and on_leave for one node type, its members' methods looked up once: the
    same calls in the same order (before_visit, each visit_X; each leave_X, after_leave), and children always
    visited, as `_BatchedCSTVisitor` does."""
    before, after = visitor.before_visit, visitor.after_leave
    visits = tuple(visitor.visitor_methods.get(f"visit_{type_name}", ()))
    leaves = tuple(visitor.visitor_methods.get(f"leave_{type_name}", ()))

    def enter(_visitor, node) -> bool:
        if before is not None:
            before(node)
        for method in visits:
            method(node)
        return True

    def leave(_visitor, node) -> None:
        for method in leaves:
            method(node)
        if after is not None:
            after(node)

    quiet_enter = before is None and not visits
    quiet_leave = after is None and not leaves
    return (_always if quiet_enter else enter), (_nothing if quiet_leave else leave)


_plans_by_class: dict[type, dict] = {}


def _plans(visitor) -> dict:
    """Plans by node type: per visitor class, except a batched visitor's, whose callbacks are its members'
    (kept on that visitor)."""
    if type(visitor) is _BatchedCSTVisitor:
        return visitor.__dict__.setdefault("_fastvisit_plans", {})
    return _plans_by_class.setdefault(type(visitor), {})


def _fast_visit(self, visitor):
    node_type = type(self)
    plans = _plans(visitor)
    plan = plans.get(node_type, _UNPLANNED)
    if plan is _UNPLANNED:
        plan = plans[node_type] = _make_plan(visitor, node_type)
    if plan is None:
        return _ORIGINAL_VISIT(self, visitor)
    enter, leave, fields = plan
    if enter(visitor, self):
        for name, called in fields:
            value = getattr(self, name)
            if value is None and name == "format_spec":
                continue  # LibCST skips an absent format spec without attribute callbacks
            if called:
                visitor.on_visit_attribute(self, name)
            if type(value) in NODE_TYPES:
                value.visit(visitor)
            elif type(value) in _SEQUENCES:
                for child in value:
                    child.visit(visitor)
            if called:
                visitor.on_leave_attribute(self, name)
    leave(visitor, self)
    return self


_ASSIGNMENT_LIKE = scope_provider._ASSIGNMENT_LIKE_NODES
_ASSIGNMENT_LIKE_TYPES = frozenset(t for t in NODE_TYPES if issubclass(t, _ASSIGNMENT_LIKE))
_ORIGINAL_SCOPE_LEAVE = scope_provider.ScopeVisitor.on_leave
_SCOPE_LEAVE_SOURCE = """
def on_leave(self, original_node: cst.CSTNode) -> None:
    self.provider.set_metadata(original_node, self.scope)
    if isinstance(original_node, _ASSIGNMENT_LIKE_NODES):
        self.scope._assignment_count += 1
    super().on_leave(original_node)
"""


def _scope_leave(self, original_node: cst.CSTNode) -> None:
    """ScopeVisitor.on_leave, testing the node's exact type against a set: `isinstance` against LibCST's
    tuple of eighteen ABC classes took a fifth of a scope resolution. A type outside LibCST's own (a
    subclass someone made) still goes through isinstance."""
    self.provider.set_metadata(original_node, self.scope)
    node_type = type(original_node)
    if node_type in _ASSIGNMENT_LIKE_TYPES or (
        node_type not in NODE_TYPES and isinstance(original_node, _ASSIGNMENT_LIKE)
    ):
        self.scope._assignment_count += 1
    cst.CSTVisitor.on_leave(self, original_node)


def _scope_leave_is_known() -> bool:
    """Whether LibCST's ScopeVisitor.on_leave is the one `_scope_leave` restates (otherwise it is kept)."""
    try:
        source = inspect.getsource(_ORIGINAL_SCOPE_LEAVE)
    except (OSError, TypeError):
        return False
    return textwrap.dedent(source).strip() == _SCOPE_LEAVE_SOURCE.strip()


_SCOPE_LEAVE = _scope_leave if _scope_leave_is_known() else _ORIGINAL_SCOPE_LEAVE


_READONLY = ClassPatch((cst.CSTNode, "visit", _fast_visit), (scope_provider.ScopeVisitor, "on_leave", _SCOPE_LEAVE))


def readonly_visits():
    """Within this block, read-only visits (any thread) skip node rebuilding; results are the same."""
    return _READONLY.applied()
