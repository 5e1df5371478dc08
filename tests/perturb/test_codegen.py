"""codegen: the same text as LibCST's own emission, for whole modules and for single nodes."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst._nodes.base import CSTCodegenError

from repoanchor.perturb.speed.codegen import code_for_node, module_code
from repoanchor.perturb.traversal.walk import children
from tests.support.modules import module_id, named_modules, node_spans

ROOT = Path(__file__).parents[2]
SOURCES = sorted((ROOT / "perturb").rglob("*.py")) + sorted((Path(__file__).parent / "cases").rglob("*.py"))
ODD = [
    "x = 1\r\ny = (\r\n  2)\r\n",  # CRLF newlines are the module's default
    "if a:\n\tb = [\n\t\t1,\n\t]\n\tc = f'{b!r:>{a}}'\n",  # tab indentation
    "\ufeffx = 1  # comment\n\n\n",
    "class K(B, metaclass=M):\n    def f(self, /, a, *b, c, **d) -> 'K': return (yield)\n",
]


@pytest.mark.parametrize(("name", "module"), named_modules(SOURCES, ODD, "odd"), ids=module_id)
def test_same_text_as_libcst(name: str, module: cst.Module):
    assert module_code(module) == module.code
    stack = [(module, 0)]
    while stack:  # every node four levels deep; some (an Annotation alone) cannot be emitted by either
        node, depth = stack.pop()
        try:
            expected = module.code_for_node(node)
        except CSTCodegenError:
            with pytest.raises(CSTCodegenError):
                code_for_node(node, module)
        else:
            assert code_for_node(node, module) == expected, type(node).__name__
        if depth < 4:
            stack.extend((child, depth + 1) for child in children(node, "pruned"))


def test_the_parentheses_shortcut_is_in_force_only_while_emitting():
    from libcst._nodes.expression import _BaseParenthesizedNode

    from repoanchor.perturb.speed import codegen

    before = _BaseParenthesizedNode._parenthesize
    with codegen.emitting():
        assert _BaseParenthesizedNode._parenthesize is codegen._parenthesize
        with codegen.emitting():
            pass
        assert _BaseParenthesizedNode._parenthesize is codegen._parenthesize
    assert _BaseParenthesizedNode._parenthesize is before


def test_a_file_s_passes_hold_both_swaps_and_leave_libcst_as_it_was():
    """The engine holds the emission swaps over a file's passes; emissions inside only count themselves in, and
    LibCST's own methods (the inherited `_codegen` of statements included) are back afterwards."""
    from libcst._nodes.expression import _BaseParenthesizedNode

    from repoanchor.perturb.engine import PassSpec, transform_source
    from repoanchor.perturb.speed import codegen, emission

    parenthesize, codegen_of_if = _BaseParenthesizedNode._parenthesize, cst.If._codegen
    assert "_codegen" not in vars(cst.BaseStatement)
    with emission.emissions_held():
        assert _BaseParenthesizedNode._parenthesize is codegen._parenthesize
        assert cst.If._codegen is emission._reusing_codegen
        with emission.emissions_held():
            pass
        assert cst.If._codegen is emission._reusing_codegen
    result = transform_source(b"def f(a):\n    if a < 1:\n        return 2\n", "m.py", [PassSpec("dead-code")])
    assert result.new_source is not None
    assert _BaseParenthesizedNode._parenthesize is parenthesize
    assert cst.If._codegen is codegen_of_if
    assert "_codegen" not in vars(cst.BaseStatement)


@pytest.mark.parametrize(
    "source",
    ["x = ((a + b)) * (c)\n", "f((yield), [(1, 2)], {**(d)})\n", "y = -(a)[(0)]\nif (a):\n    z = (\n  b)\n"],
)
def test_spans_of_parenthesised_and_bare_expressions_are_libcsts(source: str):
    """node_spans (a plain emission with marks, the shortcut in force) against LibCST's PositionProvider:
    an expression's span never includes its own parentheses."""
    from libcst.metadata import PositionProvider

    module = cst.parse_module(source)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    expressions = [node for node in positions if isinstance(node, cst.BaseExpression)]
    text, spans = node_spans(module, expressions)
    assert text == module.code
    lines = text.splitlines(keepends=True)
    starts = [sum(len(line) for line in lines[:i]) for i in range(len(lines) + 1)]
    for node in expressions:
        where = positions[node]
        expected = (starts[where.start.line - 1] + where.start.column, starts[where.end.line - 1] + where.end.column)
        assert spans[id(node)] == expected, module.code_for_node(node)
    assert any(module.code_for_node(n).startswith("(") for n in expressions)  # parenthesised ones were checked
