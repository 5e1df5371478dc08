"""Predicates carry their code: it is LibCST's for the node, an emission writes it, and nothing outlives the file."""

from __future__ import annotations

import random
import threading

import libcst as cst
import pytest

from repoanchor.perturb.speed import prerendered
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.speed.emission import FileEmission, emissions_held
from repoanchor.perturb.speed.prerendered import held, prerender
from repoanchor.perturb.transforms._predicates import _expand, opaque


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("value", [True, False])
def test_the_code_built_with_a_predicate_is_libcsts(depth: int, value: bool):
    for seed in range(300):
        rng = random.Random(seed)
        node, code = _expand(rng, value, depth, parens=bool(seed % 2))
        assert code == code_for_node(node)
        assert eval(code) == value  # noqa: S307 - literal-only, built here


def _module_with(predicate: cst.BaseExpression) -> cst.Module:
    body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Pass()])])
    return cst.Module([cst.If(predicate, body)])


def test_an_emission_writes_the_registered_code():
    """Registered with a code of its own (never so in the tool), the node is emitted as that code: the lookup is
    what the emission uses, not a codegen that happens to agree."""
    node = cst.Comparison(cst.Integer("1"), [cst.ComparisonTarget(cst.LessThan(), cst.Integer("2"))])
    with emissions_held():
        prerender(node, "1 < 2 and True")
        assert FileEmission().code(_module_with(node)) == "if 1 < 2 and True:\n    pass\n"
    assert FileEmission().code(_module_with(node)) == "if 1 < 2:\n    pass\n"  # forgotten with the file


def test_outside_a_held_emission_nothing_is_registered():
    opaque(random.Random(0), True)
    assert not prerendered._REGISTERED
    with held():
        opaque(random.Random(0), True)
        assert len(prerendered._REGISTERED) == 1
    assert not prerendered._REGISTERED


def test_emitted_modules_match_libcst_and_spans_inside_a_predicate_are_marked():
    with emissions_held():
        predicate, inner = next(_with_inner_comparison())
        module = _module_with(predicate)
        emission = FileEmission(module)
        assert emission.code(module) == module.code  # the If kept, its predicate written as registered
        text, spans = emission.spans(module, [inner], [(module, module.body[0])])
        start, end = spans[id(inner)]
        assert text[start:end] == code_for_node(inner.with_changes(lpar=[], rpar=[]))


def _with_inner_comparison():
    for seed in range(100):
        predicate = opaque(random.Random(seed), True, depth=2)
        for node in _walk(predicate):
            if isinstance(node, cst.Comparison) and node is not predicate:
                yield predicate, node


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def test_the_registry_empties_when_the_last_thread_is_done():
    entered, release = threading.Event(), threading.Event()

    def other_file():
        with held():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other_file)
    thread.start()
    entered.wait(10)
    with held():
        opaque(random.Random(1), True)
    assert len(prerendered._REGISTERED) == 1  # the other thread's file is still being transformed
    release.set()
    thread.join(10)
    assert not prerendered._REGISTERED
