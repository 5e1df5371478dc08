"""Modules whose source text some code of the tree reads as a file, named by a path literal: the tree transforms
leave them alone.

lark's ``tools/standalone.py`` writes a standalone parser by opening ``'lexer.py'``, ``'parsers/lalr_parser.py'``
and a dozen more beside itself and copying their code between ``###{standalone`` markers. A tree transform moves
code out of a file: masking into a hidden twin (the file left holds the forwarder), proxy-imports the targets of
its imports into new modules, constant-externalization its values into JSON. The copy then lacks them: under each
of the three, lark's five standalone tests failed. So a module named by a path literal is refused by all three.

A path literal is a whole quoted string, in a ``.py`` file of the tree that reads some file (``open``,
``read_text``...; tests included, as a test may read a module to check it), that is a relative path ending in ``.py``:
``'x/y/stem.py'`` names the modules whose path ends so, a bare ``'stem.py'`` every module of that name (which one is
read cannot be told from the text). A file that reads nothing names files only to import them (plugins loaded by
name). Bare names every package or project has (``'__init__.py'``, which tests a folder for a package,
``'setup.py'``, ``'conftest.py'``...) name none. Comments and documents do not count (masking's own survey reads
``folder/stem.py`` anywhere, `masking.eligibility`).
Text search, like the other placement checks: a literal that is never opened only ever refuses.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from repoanchor.perturb.source.files import python_files

_PATH_LITERAL = re.compile(r"""(['"])((?:\.{1,2}/)*((?:[\w.-]+/)*)([A-Za-z_][\w-]*)\.py)\1""")
_READS = re.compile(r"\b(open|read_text|read_bytes|get_data|getlines|read_source)\s*\(")
"""A call that reads a file: a module naming files only to import them (plugins loaded by name) reads no text."""
GENERIC_NAMES = frozenset({"__init__", "__main__", "setup", "conftest", "noxfile", "manage", "tasks", "test"})
"""Stems a bare literal may mean in any project: it names no module (with a folder, it does)."""


def modules_read_by_name(root: Path) -> dict[str, str]:
    """Tree-relative module path -> the first file of the tree naming it by a path literal (see above)."""
    files = python_files(root, include_build=True, include_tests=True)[0]
    by_stem: dict[str, list[str]] = {}
    for rel in files:
        by_stem.setdefault(posixpath.basename(rel)[:-3], []).append(rel)
    found: dict[str, str] = {}
    for reader in files:
        data = (root / reader).read_bytes()
        if b".py" not in data or not _READS.search(text := data.decode("utf-8", "replace")):
            continue
        for literal, folder, stem in _literals(text):
            for module in _named(literal, folder, stem, by_stem.get(stem, ())):
                found.setdefault(module, f"{reader} names it ({literal!r})")  # itself too: masking moves its text
    return found


def _literals(text: str) -> set[tuple[str, str, str]]:
    """(literal, its folder part, its stem) of each path literal, less those of doctest examples (``>>> f("a.py")``
    in a docstring is no read by this file: sympy's runtests.py shows ``sympy.doctest("sympy/core/basic.py")``)."""
    found = set()
    for match in _PATH_LITERAL.finditer(text):
        line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()].lstrip()
        if not line.startswith((">>>", "...")):
            found.add((match.group(2), match.group(3), match.group(4)))
    return found


def _named(literal: str, folder: str, stem: str, modules) -> list[str]:
    if not folder:
        return [] if stem in GENERIC_NAMES else list(modules)
    tail = f"{folder}{stem}.py"
    return [rel for rel in modules if rel == tail or rel.endswith(f"/{tail}")]
