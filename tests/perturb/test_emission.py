"""FileEmission: successive states of one module emitted with unchanged statements reused, each text and
each block line count the same as a fresh emission's (LibCST's `Module.code`; `node_spans` for spans)."""

from __future__ import annotations

import re
from bisect import bisect_left
from pathlib import Path

import libcst as cst
import pytest

from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.speed.emission import FileEmission, indented_blocks
from repoanchor.perturb.traversal.replace import ancestor_paths, replace_nodes
from tests.support.modules import module_id, named_modules, node_spans

ROOT = Path(__file__).parents[2]
SOURCES = sorted((ROOT / "perturb" / "transforms").glob("*.py")) + sorted((ROOT / "perturb" / "speed").glob("*.py"))
ODD = [
    "def f():\n    x = 1\n    return x",  # no trailing newline: the file's last newline is dropped
    "def f():\r\n    if x:\r\n        y = 2\r\n    return (\r\n        y)",  # CRLF, no trailing newline
    "if a:\n\tb = [\n\t\t1,\n\t]\n\tc = '''\nkeep\n  this'''\n",  # tabs; a string's lines are not indented
    "class K:\n    # lead\n\n    @dec\n    @dec2(\n        1)\n    def f(self):  # c\n        pass\n        # tail\n\n",
    "def g():\n    if a: b = 1; c = 2\n    while x:\n        pass\n    else:\n        q = 1\n",
    "try:\n    a\nexcept E as e:\n    b\nelse:\n    c\nfinally:\n    d\n",
    "async def h():\n    async with a as b:\n        async for c in b:\n            await c\n",
    "",
    "\n\n# only comments\n",
]


def reference_counts(module: cst.Module) -> dict[int, int]:
    """Lines from each block's first statement's syntactic start to its last statement's syntactic end, from a
    fresh `node_spans` emission of the module."""
    blocks = indented_blocks(module)
    text, spans = node_spans(module, [s for block in blocks for s in (block.body[0], block.body[-1])])
    newlines = [found.start() for found in re.finditer("\n", text)]

    def line(offset: int) -> int:
        return bisect_left(newlines, offset) + 1

    return {
        id(block): line(spans[id(block.body[-1])][1] - 1) - line(spans[id(block.body[0])][0]) + 1 for block in blocks
    }


class _Wrap(cst.CSTTransformer):
    """Every function body's statements moved one level in (into `if True:`), a `pass` put first in every class
    body: unchanged statements at a new indentation, and new ones beside them."""

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        wrapper = cst.If(cst.Name("True"), cst.IndentedBlock(list(updated_node.body.body)))
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[wrapper]))

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        if not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        first = cst.SimpleStatementLine([cst.Pass()])
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[first, *updated_node.body.body]))


@pytest.mark.parametrize(("name", "module"), named_modules(SOURCES, ODD, "odd"), ids=module_id)
def test_successive_states_emit_and_count_as_fresh(name: str, module: cst.Module):
    emission = FileEmission()
    states = [module]
    for _ in range(2):
        states.append(states[-1].visit(_Wrap()))
    states.append(states[-1].with_changes(body=[cst.SimpleStatementLine([cst.Pass()]), *states[-1].body]))
    for state in states:
        text, counts = emission.block_lines(state)
        assert text == state.code
        assert counts == reference_counts(state)
        assert emission.code(state) == state.code
    assert emission.code(module, keep=False) == module.code  # the first state again, all of it reused


def test_a_reused_last_statement_loses_only_its_newline_at_a_file_without_one():
    module = cst.parse_module("def f():\r\n    return 1")
    emission = FileEmission()
    assert emission.code(module) == module.code
    later = module.with_changes(body=[cst.parse_statement("x = 0\n"), *module.body])
    assert emission.code(later) == later.code == "x = 0\r\ndef f():\r\n    return 1"


def test_a_last_emission_keeps_nothing_yet_reuses_what_was_kept():
    module = cst.parse_module("class A:\n    def f(self):\n        return 1\n")
    emission = FileEmission()
    assert emission.code(module, keep=False) == module.code  # nothing kept: LibCST's emission
    assert emission.block_lines(module)[1] == reference_counts(module)
    later = module.visit(_Wrap())
    assert emission.code(later, keep=False) == later.code
    assert emission.block_lines(later) == (later.code, reference_counts(later))


def test_an_if_emitted_as_elif_is_never_confused_with_the_same_if_alone():
    """A snippet renders the `elif` branch's If alone (`if b:`); in the module the same node reads `elif b:`."""
    module = cst.parse_module("if a:\n    x = 1\nelif b:\n    y = 2\nelse:\n    z = 3\n")
    branch = module.body[0].orelse
    emission = FileEmission()
    assert emission.node_code(branch) == code_for_node(branch)  # no emission yet: LibCST's own
    assert emission.code(module) == module.code
    assert emission.node_code(branch).startswith("if b:")
    assert emission.code(module, keep=False) == module.code
    assert emission.block_lines(module) == (module.code, reference_counts(module))


class _Expressions(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.CSTNode] = []

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.found.append(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.found.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)


def _wrapped_in_place(module: cst.Module) -> cst.Module:
    """Every indented block's statements put into `if True:`, the very statement objects (LibCST's transformers
    would rebuild every node, leaving an emission nothing to reuse)."""
    blocks = indented_blocks(module)
    paths = ancestor_paths(module, blocks)

    def wrap(original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated.with_changes(body=[cst.If(cst.Name("True"), cst.IndentedBlock(list(updated.body)))])

    return replace_nodes(module, {id(block): wrap for block in blocks}, [paths[id(block)] for block in blocks])


@pytest.mark.parametrize(("name", "module"), named_modules(SOURCES, ODD, "odd"), ids=module_id)
def test_spans_in_a_keeping_emission_are_a_fresh_emissions(name: str, module: cst.Module):
    """Expressions inside statements an earlier emission kept (moved one level in) are marked all the same:
    their statements are emitted afresh; the text is LibCST's, and the next emission reuses what it kept."""
    emission = FileEmission()
    emission.code(module)
    state = _wrapped_in_place(module)
    collector = _Expressions()
    state.visit(collector)  # a visitor: the same node objects
    nodes = collector.found
    paths = ancestor_paths(state, nodes)
    text, spans = emission.spans(state, nodes, [paths[id(node)] for node in nodes])
    assert (text, spans) == node_spans(state, nodes)
    assert emission.code(state, keep=False) == state.code


@pytest.mark.parametrize(("name", "module"), named_modules(SOURCES, ODD, "odd"), ids=module_id)
def test_snippets_of_a_file_emission_are_the_same_before_and_after_its_whole_emission(name: str, module: cst.Module):
    """Given its module, an emission reuses statements for snippets from the first one: each statement's snippet is
    LibCST's code of that node wherever the file's defaults are a lone node's, and the same whether or not the
    whole file was emitted before (change records do not depend on which transform ran first)."""
    statements = [stmt for block in indented_blocks(module) for stmt in block.body] + list(module.body)
    first = FileEmission(module)
    early = [first.node_code(stmt) for stmt in statements]
    primed = FileEmission(module)
    primed.code(module)
    assert [primed.node_code(stmt) for stmt in statements] == early
    if first.reuses_snippets:
        assert early == [code_for_node(stmt) for stmt in statements]
    assert first.code(module, keep=False) == module.code  # what the snippets kept is LibCST's code in the file
