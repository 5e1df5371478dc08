"""Which rewritten sites a changed test may have met: the catalogue lists them beside the test, most likely first.

A site is near a test when its module is one the test file imports, or sits in a package the test file imports
(SQLAlchemy's ``from sqlalchemy import util`` reaches ``util/langhelpers.py`` through the package's re-exports).
Sites whose scope names a word of the test's own code come first (``util.as_interface(...)`` in the test, the site
``as_interface/ClassDef#1``): the function or class the test calls; then those of modules the test imports, then
those of the deepest imported package first (``sqlalchemy.util`` before ``sqlalchemy``). A module's name is
matched by its dotted path, or by a tail of two parts or more (``src/pkg/mod.py`` is ``pkg.mod``), never by one
part alone: the standard library's ``json`` is not ``dialects/mssql/json.py``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict
from pathlib import Path, PurePosixPath

from repoanchor.perturb.results import Applied

LISTED = 50
_SCOPE_PARTS = re.compile(r"[./#]")


def sites_near(src: Path, test_id: str, applied: list[Applied]) -> list[dict]:
    """The rewritten sites near the test `test_id` (a junit id), those its code names first, at most `LISTED`."""
    test_file, inside = locate(src, test_id)
    tree = _parsed(test_file) if test_file else None
    imported = _imported_modules(tree) if tree else set()
    words = _test_words(tree, inside) if tree else set()
    ranked = []
    for outcome in applied:
        tie = _tie(".".join(PurePosixPath(outcome.file).with_suffix("").parts).removesuffix(".__init__"), imported)
        for site in outcome.sites if any(tie) else ():
            named = bool(words.intersection(_SCOPE_PARTS.split(site.where)))
            ranked.append(((named, tie), {"file": outcome.file, **asdict(site)}))
    ranked.sort(key=lambda pair: pair[0], reverse=True)  # stable: the files' order within a rank
    return [site for _, site in ranked[:LISTED]]


def _tie(module: str, imported: set[str]) -> tuple[bool, int]:
    """(whether the test imports the module itself, how many parts name the deepest imported package it sits in):
    (False, 0) where neither."""
    tails = _tails(module)
    exact = any(name in tails for name in imported)
    depth = max((name.count(".") + 1 for name in imported for tail in tails if tail.startswith(f"{name}.")), default=0)
    return exact, depth


def _tails(module: str) -> set[str]:
    """The module's dotted name and each tail of two parts or more (the tree's folders above a package root)."""
    parts = module.split(".")
    return {".".join(parts[start:]) for start in range(max(1, len(parts) - 1))} | {module}


def _test_words(tree: ast.Module, inside: list[str]) -> set[str]:
    """Names and attributes in the test's function (its class's body where the function is not found): what it
    calls or reads."""
    node: ast.AST = tree
    for name in inside:
        found = [n for n in getattr(node, "body", []) if getattr(n, "name", None) == name]
        if not found:
            break
        node = found[0]
    if node is tree:
        return set()
    words = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            words.add(child.id)
        elif isinstance(child, ast.Attribute):
            words.add(child.attr)
    return words


def locate(src: Path, test_id: str) -> tuple[Path | None, list[str]]:
    """The file of a junit test id and the names inside it (classes, then the function; parameters dropped):
    `tests/test_x.py::TestY::test_z`, or pytest's dotted class name `tests.test_x.TestY::test_z`."""
    head, *rest = [re.sub(r"\[.*\]$", "", part) for part in test_id.split("::")]
    if head.endswith(".py"):
        return (src / head if (src / head).is_file() else None), rest
    parts = head.split(".")
    for end in range(len(parts), 0, -1):  # drop class names from the right until a file is found
        candidate = src.joinpath(*parts[:end]).with_suffix(".py")
        if candidate.is_file():
            return candidate, parts[end:] + rest
    return None, rest


def _parsed(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None


def _imported_modules(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names
