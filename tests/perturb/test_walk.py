"""The fast walk and targeted rewriting agree with LibCST's own traversal, including trees in
which one node object occurs twice."""

from __future__ import annotations

import gc
from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest

import repoanchor.perturb.traversal.walk as walk_module
from repoanchor.perturb.traversal.replace import ancestor_paths, replace_nodes
from repoanchor.perturb.traversal.walk import nodes_within, walk

SOURCES = [
    "def f(a, b=1, *c, **d):\n    return [x + 1 for x in a if x < b]\n",
    "class A(B, metaclass=M):\n    @dec\n    def g(self):\n        with open(p) as fh, x:\n            yield fh\n",
    "try:\n    pass\nexcept (E, F) as e:\n    raise\nelse:\n    x = lambda y: y ** 2\nfinally:\n    del z\n",
    "match p:\n    case [1, *rest] if rest:\n        print(f'{rest!r:>10}')\n    case {'k': v}:\n        pass\n",
    # fields LibCST reads into a local before visiting them: the walk must still follow its order
    "from a.b import (c as d, e)\nprint(f'{value:{width}.{precision}}')\n",
]


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)


@pytest.mark.parametrize("source", SOURCES)
def test_fast_walk_sees_the_same_names_as_libcst(source: str):
    module = cst.parse_module(source)
    ours, theirs = _Names(), _Names()
    walk(ours, module)
    module.visit(theirs)
    assert ours.names == theirs.names


_KINDS = [(cst.Name,), (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda, cst.GeneratorExp)]


@pytest.mark.parametrize("kinds", _KINDS, ids=lambda kinds: kinds[0].__name__)
@pytest.mark.parametrize("source", [*SOURCES, Path(walk_module.__file__).read_text()], ids=range(len(SOURCES) + 1))
def test_nodes_within_finds_what_libcst_matchers_find(source: str, kinds: tuple[type, ...]):
    module = cst.parse_module(source)
    ours = list(nodes_within(module, kinds))
    theirs = m.findall(module, m.OneOf(*(getattr(m, kind.__name__)() for kind in kinds)))
    assert [id(node) for node in ours] == [id(node) for node in theirs]


def test_a_node_occurring_twice_is_rewritten_everywhere():
    shared = cst.SimpleStatementLine([cst.Expr(cst.Name("flag"))])
    module = cst.parse_module("if a:\n    pass\nelse:\n    pass\n")
    module = module.with_changes(
        body=[
            module.body[0].with_changes(body=cst.IndentedBlock([shared]), orelse=cst.Else(cst.IndentedBlock([shared])))
        ]
    )
    name = shared.body[0].value
    paths = ancestor_paths(module, [name])
    renamed = replace_nodes(module, {id(name): lambda orig, upd: upd.with_changes(value="renamed")}, paths.values())
    assert renamed.code.count("renamed") == 2
    assert "flag" not in renamed.code


@pytest.mark.parametrize("source", SOURCES)
def test_walking_and_rewriting_leave_nothing_for_the_cyclic_collector(source: str):
    """Trees are freed as soon as they are dropped: a walk that left a cycle holding its visitor (and so the
    tree) made the collector walk every node of every file again."""
    gc.collect()
    gc.disable()
    try:
        module = cst.parse_module(source)
        walk(_Names(), module)
        paths = ancestor_paths(module, [module.body[0]])
        replace_nodes(module, {id(module.body[0]): lambda old, new: new.deep_clone()}, paths.values())
        del module, paths
        assert gc.collect() == 0
    finally:
        gc.enable()


_BRANCHY = """\
def f(a):
    if a:
        x = 1
    elif a > 2:
        y = 2
    elif a > 3: z = 3
    else:
        w = 4
    for i in a:
        pass
    else:
        v = 5
    while a:
        break
    else:
        u = 6
    try:
        t = 7
    except E:
        s = 8
    except F as e:
        r = 9
    else:
        q = 1
    finally:
        p = 2
    with c as d:
        o = 3
    match a:
        case 1:
            n = 4
        case _:
            m = 5
    def g(): return 6
    class K:
        def h(self):
            l = 7
    return a
"""


@pytest.mark.parametrize("transform", ["dead-string-assign", "dead-code", "comparison-swap", "for-to-while"])
@pytest.mark.parametrize("name", ["branchy", "traversal/walk.py", "engine.py"])
def test_the_ancestors_a_collector_records_are_those_a_walk_finds(transform: str, name: str):
    """A rewrite rebuilds only along the recorded ancestors: a wrong one would leave its site untouched."""
    from pathlib import Path

    from repoanchor.perturb.context import FileContext
    from repoanchor.perturb.engine import rng_for
    from repoanchor.perturb.transforms import get_transform

    folder = Path(__file__).parents[2] / "perturb"
    source = _BRANCHY if name == "branchy" else (folder / name).read_text()
    module = cst.parse_module(source)
    ctx = FileContext(transform, name, module, rng_for(0, transform, name), ("kw",))
    sites = get_transform(transform).candidates(module, ctx)
    assert sites or name != "branchy"
    found = ancestor_paths(module, [site.node for site in sites])
    for site in sites:
        assert site.path == found[id(site.node)], site.where
