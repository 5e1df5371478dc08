"""`speed.literals` reads a literal's value without an `ast` parse and must equal LibCST's `evaluated_value`
(`ast.literal_eval`) on every literal: the tricky forms below, and every literal of this repository's Python
files and golden trees."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from repoanchor.perturb.speed.literals import float_value, int_value, string_value
from repoanchor.perturb.traversal.walk import walk

TRICKY = r'''
ints = [0, 00, 0_0, 0x_FF, 0XfF, 0o17, 0O1_7, 0b1_01, 0B11, 1_000_003, 123456789012345678901234567890]
floats = [1.5, .5, 5., 1e5, 1E-5, 1_000.5, 01.5, 1e1_0, 1_0e-1_0, 1e400, 0.1, 5e-324]
strings = ['', "a", 'it''s', r'\d+', R"\n", u'x', U"y", b'x', rb'\x00', Br'\q', '\n', '\x41\u00e9\N{EM DASH}',
    """multi
line""", "h\u00e9llo \U0001F600", "caf√©", 'tab\there', "quote\"d"]
concatenated = ["a" 'b', "a" f"{ints}", b"a" b"b", "x" "y" "z", r'\d' '\\d', f"{ints}" "a"]
'''
CRLF = 'X = """one\r\ntwo"""\r\nY = "a\\r\\nb"\r\n'
SINGLE_TRIPLE = "Z = '''triple 'single' quotes'''\nW = '''it\\'s'''\n"


def literals(module: cst.Module) -> list[cst.CSTNode]:
    class Collect:
        def __init__(self) -> None:
            self.found: list[cst.CSTNode] = []

        def visit_Integer(self, node):
            self.found.append(node)

        def visit_Float(self, node):
            self.found.append(node)

        def visit_SimpleString(self, node):
            self.found.append(node)

        def visit_ConcatenatedString(self, node):
            self.found.append(node)

    collector = Collect()
    walk(collector, module)
    return collector.found


def assert_same_values(module: cst.Module) -> int:
    nodes = literals(module)
    for node in nodes:
        ours = {cst.Integer: int_value, cst.Float: float_value}.get(type(node), string_value)(node)
        assert ours == node.evaluated_value, node
        assert type(ours) is type(node.evaluated_value), node
    return len(nodes)


@pytest.mark.parametrize(("source", "count"), [(TRICKY, 60), (CRLF, 2), (SINGLE_TRIPLE, 2)])
def test_tricky_literals(source: str, count: int):
    assert assert_same_values(cst.parse_module(source)) == count


def test_every_literal_of_this_repository():
    root = Path(__file__).parents[2]
    paths = [
        p for folder in ("perturb", "evals", "anchor", "scaffolds", "tests") for p in (root / folder).rglob("*.py")
    ]
    paths += list((root / "tests" / "perturb" / "trees").rglob("*.py.txt"))
    assert len(paths) > 300
    checked = 0
    for path in paths:
        try:
            module = cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue  # fixtures that are deliberately not Python
        checked += assert_same_values(module)
    assert checked > 20000


def test_too_many_digits_is_a_value_error():
    with pytest.raises(ValueError, match="digits"):
        int_value(cst.Integer("9" * 5000))
