"""Functions that read the line numbers of their own code: a transform that moves lines must leave them alone.

pyparsing's `_trim_arity` takes `traceback.extract_stack()` where it starts, and its nested wrapper tells a
parse action's own TypeError from an arity mismatch by comparing `traceback.extract_tb()`'s line with that line
plus a constant (`LINE_DIFF`, "if any code changes ... must be modified"). Wrapping a block in `if`, inserting a
statement or unrolling a loop between the two changes the distance, and every parse action with fewer
arguments then fails (373 of pyparsing 3.2.0's tests under if-true-wrap or dead-code). So a site inside a
function that reads line numbers (traceback's stack and traceback extraction, inspect's frame records, a
frame's `f_lineno`, a traceback's `tb_lineno`, a code object's `co_firstlineno`), or inside a function nested
in one, is refused by the transforms that move lines. A transform that keeps every line where it was
declares `moves_lines = False`.
"""

from __future__ import annotations

import re

import libcst as cst

from repoanchor.perturb.sites import refuse_inside
from repoanchor.perturb.traversal.walk import walk

LINE_CALLS = frozenset(
    {
        "extract_stack",
        "extract_tb",
        "format_stack",
        "format_tb",
        "walk_stack",
        "walk_tb",
        "getframeinfo",
        "getouterframes",
        "getinnerframes",
        "getlineno",
    }
)
LINE_ATTRIBUTES = frozenset({"f_lineno", "tb_lineno", "co_firstlineno"})
MAY_READ_LINES = re.compile(r"\b(?:{})\b".format("|".join(sorted(LINE_CALLS | LINE_ATTRIBUTES))))
"""A file whose text names none of these has no such function: most files are never walked."""


class _Finder(cst.CSTVisitor):
    """The outermost functions whose code (nested functions included) reads line numbers, with what it reads."""

    def __init__(self) -> None:
        super().__init__()
        self.functions: list[cst.FunctionDef] = []
        self.found: dict[int, tuple[str, str]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = node.attr.value
        if name in LINE_ATTRIBUTES or name in LINE_CALLS:
            self._note(f".{name}")

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in LINE_CALLS:
            self._note(node.value)

    def _note(self, what: str) -> None:
        if self.functions:
            outer = self.functions[0]
            self.found.setdefault(id(outer), (outer.name.value, what))


def line_reading_functions(module: cst.Module, text: str) -> dict[int, tuple[str, str]]:
    """id(outermost function) -> (its name, what in it reads line numbers), for every such function of
    `module`; `text` is the file's source, which rules out most files without a walk."""
    if not MAY_READ_LINES.search(text):
        return {}
    finder = _Finder()
    walk(finder, module)
    return finder.found


def refuse_line_moves(sites: list, module: cst.Module, text: str, ctx) -> list:
    """`sites` less those inside a function that reads line numbers, each refused with `ctx.skip`."""
    found = line_reading_functions(module, text)
    why = {
        key: f"line-sensitive: {name} reads line numbers ({what}); moving its lines would change them"
        for key, (name, what) in found.items()
    }
    return refuse_inside(sites, module, why, ctx)
