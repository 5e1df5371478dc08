"""readonly_visits: the same callbacks, in the same order, and the same scope metadata as LibCST's visit."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from libcst.metadata import ExpressionContextProvider, ScopeProvider

from repoanchor.perturb.speed.fastvisit import readonly_visits

SOURCE = """
from os import *
from . import (a as b, c)
import x.y as z

@deco(1)
class K(Base, metaclass=M):
    attr: int = 3
    def m(self, p, /, q=1, *args, r, **kw) -> "K":
        global g
        v = [i for i in range(p) if i]
        w = {k: v for k, v in kw.items()}
        f = lambda s, *t: s + len(t)
        print(f"{v!r:>{q}} {w=} {r:{p}.{q}}")
        try:
            del v[0]
        except* ValueError as e:
            raise RuntimeError from e
        with open(p) as h, open(q):
            async def inner():
                nonlocal w
                await h
                yield (w := 1)
        match p:
            case [1, *rest] | {"k": _, **more} | K(a=1) as c if c:
                return rest
            case _:
                pass
        return v[1:2, ::3], -p, not q, p if q else r
"""


class Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def on_visit(self, node):
        self.events.append(("visit", id(node)))
        return True

    def on_leave(self, node):
        self.events.append(("leave", id(node)))

    def on_visit_attribute(self, node, attribute):
        self.events.append(("visit_attr", id(node), attribute))

    def on_leave_attribute(self, node, attribute):
        self.events.append(("leave_attr", id(node), attribute))


def _tree_ids(node: cst.CSTNode, found: set[int]) -> set[int]:
    found.add(id(node))
    for child in node.children:
        _tree_ids(child, found)
    return found


def _scopes(module: cst.Module) -> list:
    """Scope metadata as comparable rows: tree nodes by identity, nodes a provider made by their code."""
    tree = _tree_ids(module, set())

    def key(node) -> tuple:
        if node is None or id(node) in tree:
            return ("tree", id(node))
        return ("made", type(node).__name__, module.code_for_node(node))

    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    scopes, contexts = wrapper.resolve(ScopeProvider), wrapper.resolve(ExpressionContextProvider)
    number: dict[int, int] = {}
    for scope in scopes.values():
        number.setdefault(id(scope), len(number))
    rows: list = sorted((key(node), number[id(scope)]) for node, scope in scopes.items())
    for scope in {id(s): s for s in scopes.values() if s is not None}.values():
        assignments = sorted(
            (a.name, a._index, key(getattr(a, "node", None)), sorted(key(r.node) for r in a.references))
            for a in scope.assignments
        )
        accesses = sorted(
            (key(a.node), a._index, sorted(key(getattr(r, "node", None)) for r in a.referents)) for a in scope.accesses
        )
        rows.append((number[id(scope)], number.get(id(scope.parent)), type(scope).__name__, assignments, accesses))
    return rows + sorted((key(node), str(context)) for node, context in contexts.items())


def _same(module: cst.Module) -> None:
    plain, fast = Recorder(), Recorder()
    module.visit(plain)
    expected = _scopes(module)
    with readonly_visits():
        module.visit(fast)
        got = _scopes(module)
    assert fast.events == plain.events
    assert got == expected


def test_same_events_and_scopes_on_every_construct():
    _same(cst.parse_module(SOURCE))


def test_same_on_the_engine_itself():
    for path in sorted((Path(__file__).parents[2] / "perturb").glob("*.py")):
        _same(cst.parse_module(path.read_bytes()))


def test_transformers_and_code_after_the_block_are_untouched():
    module = cst.parse_module("x = 1\n")

    class Renamer(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return updated_node.with_changes(value="y")

    with readonly_visits():
        assert module.visit(Renamer()).code == "y = 1\n"
    assert "fastvisit" not in cst.CSTNode.visit.__module__


class Typed(cst.CSTVisitor):
    """LibCST's own on_visit/on_leave dispatch: the fast visit calls these methods and skips the no-op stubs."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def visit_FunctionDef(self, node) -> bool:
        self.events.append(("def", node.name.value))
        return node.name.value != "inner"  # False prunes the subtree, leave_ still runs

    def leave_FunctionDef(self, node) -> None:
        self.events.append(("/def", node.name.value))

    def visit_Name(self, node) -> None:
        self.events.append(("name", node.value))

    def visit_ClassDef_bases(self, node) -> None:
        self.events.append(("bases", node.name.value))

    def leave_ClassDef_bases(self, node) -> None:
        self.events.append(("/bases", node.name.value))


class Batched(cst.BatchableCSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple] = []

    def visit_Name(self, node) -> None:
        self.events.append(("name", node.value))

    def visit_Call_args(self, node) -> None:
        self.events.append(("args", len(node.args)))

    def leave_Call_args(self, node) -> None:
        self.events.append(("/args", len(node.args)))


def test_typed_and_batched_visitors_see_the_same_calls():
    module = cst.parse_module(SOURCE)
    plain, fast = Typed(), Typed()
    plain_batch, fast_batch = Batched(), Batched()
    module.visit(plain)
    cst.visit_batched(module, [plain_batch])
    with readonly_visits():
        module.visit(fast)
        cst.visit_batched(module, [fast_batch])
    assert ("/def", "inner") in plain.events
    assert ("bases", "K") in plain.events
    assert fast.events == plain.events
    assert ("args", 1) in plain_batch.events
    assert fast_batch.events == plain_batch.events


def test_the_scope_visitor_shortcut_is_in_force_only_inside_the_block():
    from libcst.metadata.scope_provider import ScopeVisitor

    from repoanchor.perturb.speed import fastvisit

    before = ScopeVisitor.on_leave
    assert fastvisit._scope_leave_is_known()  # the pinned LibCST's on_leave is the one restated
    with readonly_visits():
        assert ScopeVisitor.on_leave is fastvisit._scope_leave
        with readonly_visits():
            pass
        assert ScopeVisitor.on_leave is fastvisit._scope_leave
    assert ScopeVisitor.on_leave is before
