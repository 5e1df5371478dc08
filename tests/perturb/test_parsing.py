"""parse_source: LibCST's own tree without the per-node validation, which is back as the parse ends."""

from __future__ import annotations

import libcst as cst
import pytest

from repoanchor.perturb.speed.parsing import parse_source
from tests.support.modules import repository_sources

SOURCES = repository_sources()
ODD = [
    "x = 1\r\ny = (\r\n  2)\r\n",
    "if a:\n\tb = [\n\t\t1,\n\t]\n\tc = f'{b!r:>{a}}'\n",
    "\ufeffx = 1  # comment\n\n\n\x0c\n",
    "match p:\n    case [1, *rest] if rest: pass\n    case {'k': v, **kw}: pass\n",
    "async def f():\n    async with a as (b, c):\n        return [x async for x in y if not x]\n",
]


@pytest.mark.parametrize("source", [path.read_bytes() for path in SOURCES] + [t.encode() for t in ODD])
def test_same_tree_and_text_as_libcst(source: bytes):
    parsed = parse_source(source)
    assert parsed.deep_equals(cst.parse_module(source))
    assert parsed.bytes == cst.parse_module(source).bytes


def test_nodes_made_afterwards_are_validated():
    parse_source("x = (1)\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("x", lpar=[cst.LeftParen()])  # unbalanced parentheses


def test_a_parse_error_propagates_and_validation_is_back():
    with pytest.raises(cst.ParserSyntaxError):
        parse_source("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("x", lpar=[cst.LeftParen()])
