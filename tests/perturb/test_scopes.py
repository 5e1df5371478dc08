"""scopes: the bound (STORE) names found by one walk are exactly those LibCST's ExpressionContextProvider
finds, and ScopeProvider resolved with them gives the same scopes, assignments, references and accesses."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import ExpressionContext, ExpressionContextProvider, ScopeProvider

from repoanchor.perturb.speed.scopes import resolve_scopes, stored_names
from repoanchor.perturb.walk import children
from tests.support.modules import module_id, named_modules

ROOT = Path(__file__).parents[2]
SOURCES = sorted((ROOT / "perturb").rglob("*.py")) + sorted((ROOT / "evals" / "harness").glob("*.py"))
TRICKY = [
    "a, (b, *c) = d[e] = f.g = h\nfor (i, j), *k in l: m[n] += o\n",
    "x = [y for y in z if (w := y)]\ndel p, q[r], s.t\nwith u as (v, w2), u2 as w3: pass\n",
    "try:\n    pass\nexcept E as e:\n    import a.b as c, d\n    from f import g as h, i\n",
    "@dec(k=1)\nclass C(B, metaclass=M):\n    x: int = y\n"
    "    def f(self, a: 'C', *b, c=d, **e) -> 'R':\n        nonlocal_x = lambda q, r=s: q\n",
    "def outer():\n    v = 1\n    def inner():\n        global g\n        g = v\n"
    "    return {k: v for k, v in items()}\n",
    "match cmd:\n    case [x, *rest] if x > 1:\n        y = x\n"
    "    case {'k': v, **kw}:\n        pass\n    case P(a=b) as c:\n        pass\n",
    "async def f():\n    async for a in b:\n        async with c as d:\n            e: 'T'\n            await g(h=i)\n",
    "print(f'{x=} {y!r:>{w}}')\nz = (yield)\n",
]


def _summary(scopes, module: cst.Module):
    """Scopes by first appearance; nodes of the module by identity, others (parsed from string annotations,
    new on every resolve) by what they spell."""
    own, stack = set(), [module]
    while stack:
        node = stack.pop()
        own.add(id(node))
        stack.extend(children(node))

    def key(node) -> str:
        return str(id(node)) if id(node) in own else f"{type(node).__name__}:{getattr(node, 'value', '')}"

    numbers: dict[int, int] = {}
    placed = sorted((key(node), numbers.setdefault(id(scope), len(numbers))) for node, scope in scopes.items() if scope)
    described = {}
    for scope in {id(s): s for s in scopes.values() if s}.values():
        described[numbers[id(scope)]] = (
            type(scope).__name__,
            sorted((a.name, key(a.node), sorted(key(r.node) for r in a.references)) for a in scope.assignments),
            sorted(key(access.node) for access in scope.accesses),
        )
    return placed, described


@pytest.mark.parametrize(("name", "module"), named_modules(SOURCES, TRICKY, "tricky"), ids=module_id)
def test_same_bound_names_and_scopes_as_libcst(name: str, module: cst.Module):
    contexts = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(ExpressionContextProvider)
    stored = {node for node, context in contexts.items() if context is ExpressionContext.STORE}
    assert stored_names(module) == {node for node in stored if isinstance(node, cst.Name)}
    expected = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    assert _summary(resolve_scopes(cst.MetadataWrapper(module, unsafe_skip_copy=True)), module) == _summary(
        expected, module
    )


def test_the_wrapper_answers_later_questions_with_libcsts_own_contexts():
    module = cst.parse_module("x = y\n")
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    resolve_scopes(wrapper)
    contexts = wrapper.resolve(ExpressionContextProvider)
    target, value = module.body[0].body[0].targets[0].target, module.body[0].body[0].value
    assert (contexts[target], contexts[value]) == (ExpressionContext.STORE, ExpressionContext.LOAD)
    assert len(contexts) == 2  # LibCST's full mapping, not the STORE-only stand-in
