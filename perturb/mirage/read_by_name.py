"""Modules whose source text some code of the tree reads as a file, named by a path literal: the tree transforms
leave them alone.

lark's ``tools/standalone.py`` writes a standalone parser by opening ``'lexer.py'``, ``'parsers/lalr_parser.py'``
and a dozen more beside itself and copying their code between ``###{standalone`` markers. A tree transform moves
code out of a file: masking into a hidden twin (the file left holds the forwarder), proxy-imports the targets of
its imports into new modules, constant-externalization its values into JSON. The copy then lacks them: under each
of the three, lark's five standalone tests failed. So a module named by a path literal is refused by all three.

A path literal is a string constant of a ``.py`` file's code (not a docstring, a comment or a doctest's output)
that is a relative path ending in ``.py``, in a file that reads files (``open``, ``read_text``...; tests included, as
a test may read a module to check it; a file that reads nothing names files only to import them, as plugins loaded
by name). ``'x/y/stem.py'`` names the modules whose path ends so. A bare ``'stem.py'`` names the modules of that
name in the reader's own package (its topmost folder with an ``__init__.py``, or its folder), and only where the
reader finds files beside itself (``__file__``, ``__path__``, ``get_data``, ``resources``): flask's ``cli.py`` looks
for a user's ``'app.py'``, not flask's own. Bare names every package or project has (``'__init__.py'``, which tests a
folder for a package, ``'setup.py'``, ``'conftest.py'``...) name none.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path

from repoanchor.perturb.source.files import python_files
from repoanchor.perturb.source.sourcefile import called_name

_PATH = re.compile(r"(?:\.{1,2}/)*((?:[\w.-]+/)*)([A-Za-z_][\w-]*)\.py")
_ENDS_IN_PY = re.compile(rb"\.py['\"]")
"""A literal naming a module ends in ``.py``, so its source does, before its closing quote: a file with none is not
parsed (sympy: 13 of the 34 files that read files and mention ``.py``; a suffix spelled by escapes is not seen)."""
_READS = re.compile(r"\b(open|read_text|read_bytes|get_data|getlines|read_source)\s*\(")
_FINDS_OWN_FILES = re.compile(r"__file__|__path__|\bget_data\b|\bresources\b")
GENERIC_NAMES = frozenset({"__init__", "__main__", "setup", "conftest", "noxfile", "manage", "tasks", "test"})
"""Stems a bare literal may mean in any project: it names no module (with a folder, it does)."""


def modules_read_by_name(root: Path) -> dict[str, str]:
    """Tree-relative module path -> the first file of the tree naming it by a path literal (see above)."""
    files = python_files(root, include_build=True, include_tests=True)[0]
    packages = {posixpath.dirname(rel) for rel in files if posixpath.basename(rel) == "__init__.py"}
    by_stem: dict[str, list[str]] = {}
    for rel in files:
        by_stem.setdefault(posixpath.basename(rel)[:-3], []).append(rel)
    found: dict[str, str] = {}
    for reader in files:
        data = (root / reader).read_bytes()
        if not _ENDS_IN_PY.search(data) or not _READS.search(text := data.decode("utf-8", "replace")):
            continue
        home = _package_root(posixpath.dirname(reader), packages) if _FINDS_OWN_FILES.search(text) else None
        for literal in _path_literals(data):
            for module in _named(literal, by_stem, home):
                found.setdefault(module, f"{reader} names it ({literal!r})")  # itself too: masking moves its text
    return found


def _path_literals(data: bytes) -> set[str]:
    """The relative ``.py`` paths the code spells: a string constant (docstrings and bare strings left out), or the
    constants a path is joined from (``root / "action" / "main.py"``, ``os.path.join(here, "action", "main.py")``:
    black's tests read ``action/main.py`` so and run its functions)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    bare = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    spelled = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare:
            spelled.add(node.value)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            spelled.add(_joined(_division_operands(node)))
        elif isinstance(node, ast.Call) and called_name(node) in ("join", "joinpath"):
            spelled.add(_joined(node.args))
    return {text for text in spelled if ".py" in text and _PATH.fullmatch(text)}


def _division_operands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return [*_division_operands(node.left), node.right]
    return [node]


def _joined(parts: list[ast.expr]) -> str:
    """The trailing string constants of a join, joined by ``/`` ("" where the last part is not one)."""
    tail: list[str] = []
    for part in reversed(parts):
        if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
            break
        tail.insert(0, part.value)
    return "/".join(tail)


def _named(literal: str, by_stem: dict[str, list[str]], home: str | None) -> Iterator[str]:
    folder, stem = _PATH.fullmatch(literal).groups()
    modules = by_stem.get(stem, ())
    if folder:
        tail = f"{folder}{stem}.py"
        yield from (rel for rel in modules if rel == tail or rel.endswith(f"/{tail}"))
    elif home is not None and stem not in GENERIC_NAMES:
        yield from (rel for rel in modules if not home or rel.startswith(f"{home}/"))


def _package_root(folder: str, packages: set[str]) -> str:
    """The topmost folder of `folder`'s package chain ("" for the tree root), or `folder` outside any package."""
    while folder in packages and posixpath.dirname(folder) in packages and folder:
        folder = posixpath.dirname(folder)
    return folder
