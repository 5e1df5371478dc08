"""Sites map to astroid's nodes by source order exactly as they do by character spans, and where the order
cannot be trusted (f-strings, counts that differ, other shapes) the mapping says so instead of guessing."""

from __future__ import annotations

from pathlib import Path

import astroid
import libcst as cst
import pytest
from astroid import nodes as an

from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.proofs.builtin_numbers import _astroid_spans
from repoanchor.perturb.results import Applied
from repoanchor.perturb.sites import SiteCollector
from repoanchor.perturb.speed.emission import FileEmission
from repoanchor.perturb.speed.node_order import in_source_order, same_shape

KINDS = [(cst.BinaryOperation, an.BinOp), (cst.Comparison, an.Compare)]
SHAPES = """\
@register(a + b, key=c < d)
def f(x: a | b = n * 2, *, y=lambda q=a + 1: q - b) -> a ^ b:
    z = (a + b) * c - (d + e) + -g ** h
    w = x + 1 if a < b < c else y - 1
    v = [i * j for i in r + s if i % 2 > j // 3]
    u = {k + 1: k < 2 for k in t}
    s = t[a + 1 : b - 1, ::c * d]
    assert a >= b, a + b
    with p + q as r:
        u += not a == b
    return z @ w @ v if w is not None else a.b.c + True
"""
REPO = Path(__file__).resolve().parents[2]
REAL_MODULES = sorted((REPO / "perturb").rglob("*.py"))[::4]


class _Operations(SiteCollector):
    """Every node of one kind, met as the transforms' collectors meet them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.CSTNode] = []

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.found.append(node)


class _Comparisons(_Operations):
    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        pass

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.found.append(node)


def _in_fstring(node: an.NodeNG) -> bool:
    return any(isinstance(parent, an.JoinedStr) for parent in node.node_ancestors())


def _collected(module: cst.Module, kind: type) -> list[cst.CSTNode]:
    collector = _Operations() if kind is cst.BinaryOperation else _Comparisons()
    collector.collect(module)
    return collector.found


@pytest.mark.parametrize(("libcst_kind", "astroid_kind"), KINDS)
@pytest.mark.parametrize("source", [SHAPES, *REAL_MODULES], ids=lambda s: getattr(s, "name", "shapes"))
def test_source_order_maps_every_node_as_character_spans_do(source, libcst_kind, astroid_kind):
    text = source.read_text() if isinstance(source, Path) else source
    module = cst.parse_module(text)
    nodes = _collected(module, libcst_kind)
    tree = astroid.parse(text)
    ordered = in_source_order(tree, astroid_kind, len(nodes))
    if ordered is None:  # an f-string holds one of them: the spans decide, as before
        assert any(_in_fstring(node) for node in tree.nodes_of_class(astroid_kind))
        return
    marked, spans = FileEmission(module).spans(module, nodes, [() for _ in nodes])
    assert marked == text
    at_span = _astroid_spans(tree, text, astroid_kind)
    assert [at_span[spans[id(node)]] for node in nodes] == ordered
    assert all(same_shape(node, other) for node, other in zip(nodes, ordered, strict=True))


def test_the_shapes_module_has_every_kind_of_nesting():
    module = cst.parse_module(SHAPES)
    assert len(_collected(module, cst.BinaryOperation)) == 27
    assert len(_collected(module, cst.Comparison)) == 7


def test_a_count_that_differs_or_an_fstring_is_not_trusted():
    tree = astroid.parse("a = b + c\nd = e * f\n")
    assert in_source_order(tree, an.BinOp, 2) is not None
    assert in_source_order(tree, an.BinOp, 3) is None
    assert in_source_order(astroid.parse('a = b + c\nd = f"{e * f}"\n'), an.BinOp, 2) is None


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("a + b", "a - b"),
        ("a + b", "a + c"),
        ("a.x < b", "a.y < b"),
        ("a < b", "a <= b"),
        ("a < b", "a < b < c"),
        ("True + a", "true + a"),
        ("1 + a", "1.0 + a"),
        ("-a * b", "+a * b"),
        ("a + b", "(a,) + b"),
    ],
)
def test_a_different_expression_is_not_the_same_shape(ours, theirs):
    node = cst.parse_expression(ours)
    other = astroid.extract_node(theirs)
    assert not same_shape(node, other)
    assert same_shape(node, astroid.extract_node(ours))


def test_a_site_in_an_fstring_is_still_proven_through_its_span():
    """The order is not trusted here, so the sites are mapped by spans: both operations are still swapped."""
    source = b'def f(x):\n    n = len(x)\n    label = f"{n + 1}"\n    return n * 2, label\n'
    result = transform_source(source, "m.py", [PassSpec("operand-permute")], fraction=1.0)
    applied = [o for o in result.outcomes if isinstance(o, Applied)]
    assert [(s.before, s.after) for s in applied[0].sites] == [("n + 1", "1 + n"), ("n * 2", "2 * n")]
