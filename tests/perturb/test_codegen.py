"""codegen: the same text as LibCST's own emission, for whole modules and for single nodes."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst._nodes.base import CSTCodegenError

from repoanchor.perturb.speed.codegen import code_for_node, module_code
from repoanchor.perturb.walk import children

ROOT = Path(__file__).parents[2]
SOURCES = sorted((ROOT / "perturb").rglob("*.py")) + sorted((Path(__file__).parent / "cases").rglob("*.py"))
ODD = [
    "x = 1\r\ny = (\r\n  2)\r\n",  # CRLF newlines are the module's default
    "if a:\n\tb = [\n\t\t1,\n\t]\n\tc = f'{b!r:>{a}}'\n",  # tab indentation
    "\ufeffx = 1  # comment\n\n\n",
    "class K(B, metaclass=M):\n    def f(self, /, a, *b, c, **d) -> 'K': return (yield)\n",
]


def _modules():
    for path in SOURCES:
        yield path.name, cst.parse_module(path.read_bytes())
    for index, text in enumerate(ODD):
        yield f"odd-{index}", cst.parse_module(text)


@pytest.mark.parametrize(("name", "module"), list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
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
