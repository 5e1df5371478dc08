"""Whole-project facts a file-local transformation needs: supported Pythons (`metadata_files.py`), a class index."""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.source.absent_words import absent_words
from repoanchor.perturb.source.code_locals import locals_read
from repoanchor.perturb.source.enumerations import (
    enumerated_classes,
    enumeration_index,
    instance_classes,
    last_name,
    may_enumerate,
    parsed_files,
)
from repoanchor.perturb.source.files import python_files, read_test_files
from repoanchor.perturb.source.metadata_files import min_python
from repoanchor.perturb.source.quoted_frames import test_quotes
from repoanchor.perturb.source.rewritten_asserts import rewritten_modules
from repoanchor.perturb.source.source_reads import sources_read
from repoanchor.perturb.source.unparsed import unparsed_here
from repoanchor.perturb.speed.bigstack import map_chunks
from repoanchor.perturb.speed.gcpause import cyclic_gc_deferred


def class_index(
    root: Path, files: list[str], workers: int = 1
) -> tuple[dict[str, set[str]], dict[str, list[str]], set[str]]:
    """Class name -> member names and base names over `files` (same-named classes are merged), and the classes
    whose members those files list (`enumerated_classes`), from one parse of each file, on `workers` processes
    (parts merged in file order: the same index as one pass)."""
    members: dict[str, set[str]] = {}
    bases: dict[str, list[str]] = {}
    enumerated: set[str] = set()
    for part_members, part_bases, part_enumerated in map_chunks(_class_index_part, files, workers, root):
        for name, names in part_members.items():
            members.setdefault(name, set()).update(names)
        for name, found in part_bases.items():
            known = bases.setdefault(name, [])
            known.extend(b for b in found if b not in known)
        enumerated |= part_enumerated
    return members, bases, enumerated


def _class_index_part(files: list[str], root: Path) -> tuple[dict[str, set[str]], dict[str, list[str]], set[str]]:
    members: dict[str, set[str]] = {}
    bases: dict[str, list[str]] = {}
    enumerated: set[str] = set()
    with cyclic_gc_deferred():  # `ast` trees hold no cycles
        for source, tree in parsed_files(root, files, lambda source: may_define_class(source) or may_enumerate(source)):
            enumerated |= enumerated_classes(tree) if may_enumerate(source) else set()
            for node in class_defs(tree):
                members.setdefault(node.name, set()).update(_body_names(node.body))
                known = bases.setdefault(node.name, [])
                known.extend(b for b in (last_name(e) for e in node.bases) if b and b not in known)
    return members, bases, enumerated


_STATEMENT_LISTS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def class_defs(tree: ast.AST) -> Iterator[ast.ClassDef]:
    """Every class statement in `tree`, in `ast.walk`'s order, walking statement lists only: a class is a
    statement, so it never sits under an expression, and expressions are most of a tree's nodes.
    (Breadth first, fields in their order, as `ast.walk`: same-named classes merge their bases in that order.)"""
    queue = deque([tree])
    while queue:
        node = queue.popleft()
        if isinstance(node, ast.ClassDef):
            yield node
        for name in node._fields:
            if name in _STATEMENT_LISTS:
                children = getattr(node, name, None)
                if isinstance(children, list):
                    queue.extend(children)


def _body_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.If, ast.Try)):
            names.update(_body_names(stmt.body + getattr(stmt, "orelse", [])))
    return names


_CLASS_LINE = re.compile(rb"(?:^|\r)[ \t\f]*class\b", re.MULTILINE)


def may_define_class(source: bytes) -> bool:
    """False only when `source` holds no class statement: a compound statement starts a line (after
    indentation, which may hold form feeds), so no line starts with the word `class` (about a third of sympy's
    modules: they need no parse). Non-ASCII text is always read, as for `may_enumerate`."""
    return not source.isascii() or _CLASS_LINE.search(source) is not None


def project_info(
    root: Path, files: list[str], *, index_classes: bool, python: str | None = None, workers: int = 1
) -> ProjectInfo:
    """`python` ("3.9"): the one interpreter the variant must run under, instead of the declared minimum.
    The class index reads every file: on `workers` processes, each in a large stack (deep expressions)."""
    info = ProjectInfo(min_python=tuple(map(int, python.split(".")[:2])) if python else min_python(root))
    every = python_files(root, include_tests=True, include_build=True)[0]  # one walk for the readers below
    info.unparsed = unparsed_here(root, info.min_python, every)
    tests = read_test_files(root, every)  # read once for the two readers of test files
    info.quoted_frames, info.quoted_errors = test_quotes(tests)
    info.rewritten_asserts = rewritten_modules(root, every)
    info.locals_read, info.locals_named = locals_read(tests)
    info.sources_read = sources_read(tests, every)
    info.absent_words = absent_words(tests)
    if index_classes:
        info.class_members, info.class_bases, enumerated = class_index(root, files, workers)
        info.enumerated = instance_classes(root, every, enumerated | enumeration_index(root, files, every, workers))
        info.indexed = True
    return info
