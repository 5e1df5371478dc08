"""Functions whose source a test quotes in an expected traceback: their text stays as written.

glom's tests compare a traceback's text frame by frame: ``File "core.py", line ___, in glom`` and below it the
line itself, ``raise err``. Renaming ``err`` (local-rename), or any rewrite of that line, changes the text the test
expects, and it fails although the code runs alike. So the string constants of the project's test files are read
for such frames (a ``File "<name>", line <n>, in <function>`` line followed by a source line), and every function
of that name in a file of that name is left alone by the file passes (`refuse_quoted`) and keeps its literals
(constant-externalization); masking leaves such a file in place, as the frame names it.

CPython's contextlib tests compare `traceback.extract_tb` frames as (function, line) pairs:
``('__exit__', 'raise exc_details[1]')``. In a test file that extracts frames so, every pair of strings whose first
is a name quotes that function in whatever file (`ANY_FILE`).
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath
from typing import NamedTuple

import libcst as cst

from repoanchor.perturb.sites import refuse_inside
from repoanchor.perturb.source.quoted_errors import error_messages
from repoanchor.perturb.source.sourcefile import parsed_quietly
from repoanchor.perturb.speed.codegen import code_for_node

FRAME = re.compile(r'^\s*File "([^"]+)", line [^,]+, in (\S+)\s*$')
QUOTES_A_FRAME = re.compile(rb'File \\?"[^"\n]*\\?", line|extract_tb|extract_stack|FrameSummary|StackSummary|E  ')
"""Bytes every test file quoting a frame (or a pytest error line) holds: most files are ruled out unread."""
EXTRACTS_FRAMES = re.compile(rb"extract_tb|extract_stack|FrameSummary|StackSummary")
ANY_FILE = "*"
ELIDED_FRAME = re.compile(r"^\s*File \.\.\.\s*$")
"""A frame line whose place a doctest's ELLIPSIS stands for; the source line below it still says which code ran."""
SOURCE_LINE = "<source line>"
MIN_SOURCE_LINE = 12
"""Characters a source line below an elided frame needs to name code: `return x` names nothing."""


class TestQuotes(NamedTuple):
    frames: frozenset[tuple[str, str]]
    """(file name, function name) of the frames quoted with their source line."""
    errors: frozenset[str]
    """The messages of pytest error lines (`quoted_errors.py`)."""


def test_quotes(tests: dict[str, bytes]) -> TestQuotes:
    """What the string constants of the tree's test files (`files.read_test_files`) quote: each frame shown with its
    source line below it, and each pytest error line."""
    found: set[tuple[str, str]] = set()
    errors: set[str] = set()
    for data in tests.values():
        if not QUOTES_A_FRAME.search(data):
            continue
        if (tree := parsed_quietly(data)) is None:
            continue
        pairs = bool(EXTRACTS_FRAMES.search(data))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if 'File "' in node.value:
                    found |= frames_in(node.value)
                if "E  " in node.value:
                    errors |= error_messages(node.value)
            elif pairs and isinstance(node, ast.Tuple) and (function := _quoted_pair(node)):
                found.add((ANY_FILE, function))
    return TestQuotes(frozenset(found), frozenset(errors))


def _quoted_pair(node: ast.Tuple) -> str | None:
    """The function of a (function, source line) pair of string constants, as `extract_tb` frames compare."""
    if len(node.elts) != 2 or not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return None
    function, line = (e.value for e in node.elts)
    return function if function.isidentifier() and line.strip() else None


def frames_in(text: str) -> set[tuple[str, str]]:
    """The (file name, function name) of each frame line of `text` followed by its source line; for a frame whose
    place a doctest elides (``File ...``), (`SOURCE_LINE`, that source line)."""
    lines = text.splitlines()
    found = set()
    for line, below in zip(lines, lines[1:], strict=False):  # each line and the one below it
        frame = FRAME.match(line)
        if frame and below.strip() and not FRAME.match(below):
            found.add((PurePosixPath(frame.group(1).replace("\\", "/")).name, frame.group(2)))
        elif ELIDED_FRAME.match(line) and len(below.strip()) >= MIN_SOURCE_LINE and not FRAME.match(below):
            found.add((SOURCE_LINE, below.strip()))
    return found


def quoted_functions(
    module: cst.Module, path: str, quoted: frozenset[tuple[str, str]], text: str | None = None
) -> dict[int, str]:
    """id(function) -> why it is left alone, for the functions of `module` (file `path`, its source `text` where
    known) a test's traceback quotes: by name, or by a source line of theirs below an elided frame."""
    name = PurePosixPath(path).name
    functions = {function for file, function in quoted if file in (name, ANY_FILE)}
    found = _holding_quoted_lines(module, name, quoted, text)
    if not functions:
        return found
    for node in _functions(module):
        if node.name.value in functions:
            found[id(node)] = (
                f"quoted-in-test: a test's expected traceback shows {name}'s {node.name.value} line by line"
            )
    return found


def refuse_quoted(sites: list, module: cst.Module, ctx) -> list:
    """`sites` less those inside a function a test's traceback quotes, each refused with `ctx.skip`."""
    if not ctx.project.quoted_frames:
        return sites
    quoted = ctx.project.quoted_frames
    text = ctx.code if any(kind == SOURCE_LINE for kind, _ in quoted) else None  # emitting the file is not free
    return refuse_inside(sites, module, quoted_functions(module, ctx.path, quoted, text), ctx)


def _holding_quoted_lines(
    module: cst.Module, name: str, quoted: frozenset[tuple[str, str]], text: str | None
) -> dict[int, str]:
    """The functions of `module` whose code holds a source line quoted below an elided frame (any that holds it: an
    enclosing function too, since which of them ran is not said)."""
    lines = [line for kind, line in quoted if kind == SOURCE_LINE and (text is None or line in text)]
    if not lines:
        return {}
    found = {}
    for node in _functions(module):
        code = code_for_node(node)
        if shown := next((line for line in lines if line in code), None):
            found[id(node)] = f"quoted-in-test: a test's expected traceback shows {name}'s {node.name.value}: {shown}"
    return found


def _functions(node: cst.CSTNode):
    """Every function definition under `node`, nested ones included."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.FunctionDef):
            yield current
        stack.extend(current.children)
