"""Sites refused from the file's bindings, before astroid builds the file: each rule on a small file, astroid's
own verdict on every site refused here (over this repository's modules too), and no astroid tree where no site is
left to prove."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import libcst as cst
import pytest
from astroid import nodes as an
from astroid.builder import AstroidBuilder

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.proofs.builtin_numbers import Refused, astroid_sites, forget_inference, number_types
from repoanchor.perturb.proofs.unprovable import unprovable_sites
from repoanchor.perturb.results import Applied
from repoanchor.perturb.transforms.operand_permute import OperandPermute, _Collector

REPO = Path(__file__).resolve().parents[2]
HEAD = "from sympy import Symbol, S\nimport numpy as np\nfrom . import shapes\nimport math\nLIMIT = 4\n"
CASES = [
    ("def f(n):\n    return n + 1\n", "uninferable operand: n"),
    ("def f(n=3):\n    return n + 1\n", "uninferable operand: n"),
    ("def f(*rest):\n    return rest + 1\n", "non-numeric operand: rest"),
    ("def f():\n    return S.Zero + 1\n", "uninferable operand: S"),
    ("def f():\n    return shapes.SIDES + 1\n", "uninferable operand: shapes"),
    ("x = Symbol('x')\ny = x.real\n\n\ndef f():\n    return y + 1\n", "uninferable operand: y"),
    ("def f():\n    z = np.zeros(3)[0] * 2\n    return z + 1\n", "uninferable operand: z"),
    ("def f():\n    word = 'abc'\n    return word + 1\n", "non-numeric operand: word"),
    ("class K:\n    pass\n\n\ndef f():\n    return K + 1\n", "non-numeric operand: K"),
    ("g = lambda q: q + 1\n", "uninferable operand: q"),
    ("R, x, *ys = Symbol('x, y')\n\n\ndef f():\n    return x + 1\n", "uninferable operand: x"),
    ("def f():\n    for k in np.arange(3):\n        print(k + 1)\n", "uninferable operand: k"),
    ("def f():\n    with np.errstate() as state:\n        return state + 1\n", "uninferable operand: state"),
    # a leaf is judged by the scopes around it: another function's number is out of a lookup's reach
    ("def g():\n    n = 3\n    return n\n\n\ndef f(n):\n    return n + 1\n", "uninferable operand: n"),
    ("def g():\n    k = 3\n    return k\n\n\nh = lambda k: k + 1\n", "uninferable operand: k"),
    # left to astroid: a method's own instance, the standard library, a builtin, a number bound somewhere
    ("class K:\n    def f(self):\n        return self.size + 1\n", None),
    ("def f():\n    return math.pi + 1\n", None),
    ("def f(items):\n    return len(items) + 1\n", None),
    ("def f():\n    return LIMIT + 1\n", None),
    ("def f(n):\n    n = 2\n    return n + 1\n", None),
    ("def g():\n    global n\n    n = 3\n\n\ndef f(n):\n    return n + 1\n", None),  # every binding, declared
    ("n = 3\n\n\ndef f():\n    return n + 1\n\n\ndef g(n):\n    return n\n", None),  # the enclosing scope's
    ("def f(n):\n    def g():\n        return n + 1\n\n    n = 2\n", None),  # the enclosing function's
    ("a = b + 1\nb = a + 1\nc = a + 1\n", None),
    ("def f():\n    for k in range(3):\n        print(k + 1)\n", None),
    ("def f():\n    x, y = 1, 2\n    return x + 1\n", None),
    # a parameter rebound by `except*`, `case [*n]`, `nonlocal`: each binding unknown here, so astroid judges
    ("def f(n):\n    try:\n        pass\n    except* ValueError as n:\n        return n + 1\n", None),
    ("def f(n):\n    match n:\n        case [*n]:\n            return n + 1\n", None),
    ("def f(n):\n    def g():\n        nonlocal n\n        return n + 1\n", None),
    ("from os.path import *\n\n\ndef f(n):\n    return n + 1\n", None),
]


def _sites(source: str) -> tuple[cst.Module, FileContext, list, _Collector]:
    module = cst.parse_module(source)
    ctx = FileContext("operand-permute", "m.py", module, None)
    collector = _Collector(ctx)
    return module, ctx, collector.collect(module), collector


@pytest.mark.parametrize(("body", "reason"), CASES)
def test_each_rule_on_its_own(body: str, reason: str | None):
    _, _, sites, collector = _sites(HEAD + body)
    _, refused = unprovable_sites(collector, sites, lambda site: [site.node.left, site.node.right])
    assert [why.split(" (")[0] for _, why in refused][-1:] == ([reason] if reason else [])


def _astroid_refuses(source: str) -> list[str]:
    """Sites refused here that astroid proves (none, if the rules hold), by `where`."""
    module, ctx, sites, collector = _sites(source)
    _, refused = unprovable_sites(collector, sites, lambda site: [site.node.left, site.node.right])
    wrong = []
    try:
        for site, binop in astroid_sites(module, ctx, [site for site, _ in refused], an.BinOp, collector.seen):
            try:
                if binop is not None and all(number_types(side) for side in (binop.left, binop.right)):
                    wrong.append(site.where)
            except Refused:
                pass
    finally:
        forget_inference()
    return wrong


@pytest.mark.parametrize("body", [body for body, reason in CASES if reason])
def test_astroid_refuses_each_site_refused_here(body: str):
    assert _astroid_refuses(HEAD + body) == []


@pytest.mark.parametrize("path", sorted((REPO / "perturb").rglob("*.py"))[::3], ids=lambda p: p.name)
def test_astroid_refuses_each_site_refused_here_in_real_modules(path: Path):
    assert _astroid_refuses(path.read_text()) == []


def test_no_astroid_tree_where_no_site_is_left():
    source = (HEAD + "def f(n, m):\n    return n + m + S.One\n").encode()
    with mock.patch.object(AstroidBuilder, "string_build", side_effect=AssertionError("astroid was built")):
        result = transform_source(source, "m.py", [PassSpec("operand-permute")], fraction=1.0)
    assert not [o for o in result.outcomes if isinstance(o, Applied)]
    assert {o.reason.split(" (")[0] for o in result.outcomes if o.where} == {"uninferable operand: n"}


def test_a_site_left_is_still_proven():
    source = (HEAD + "def f(n):\n    return n + 1, LIMIT + 2\n").encode()
    result = transform_source(source, "m.py", [PassSpec(OperandPermute.id)], fraction=1.0)
    applied = [site.where for o in result.outcomes if isinstance(o, Applied) for site in o.sites]
    assert applied == ["f/BinaryOperation#2"]
