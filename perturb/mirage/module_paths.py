"""Dotted names of a tree's modules and of what a module's imports bind, read from files and `ast` alone (nothing is
imported): which module a file is, which module a `from ... import` reads, which module a name stands for."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable


def dotted_modules(files: Iterable[str], packages: set[str]) -> dict[str, str]:
    """Dotted module name -> tree-relative file, for the modules in packages (the first of duplicates)."""
    modules: dict[str, str] = {}
    for rel in sorted(files):
        if not rel.endswith(".py") or posixpath.dirname(rel) not in packages:
            continue
        dotted = dotted_module(rel, packages)
        modules.setdefault(dotted, rel)
    return modules


def dotted_module(rel: str, packages: set[str]) -> str:
    """The dotted name of module `rel` (tree-relative), its folders that are `packages` leading."""
    folder, stem = posixpath.split(rel[: -len(".py")])
    parts = [] if stem == "__init__" else [stem]
    while folder in packages:
        folder, name = posixpath.split(folder)
        parts.insert(0, name)
    return ".".join(parts)


def import_aliases(tree: ast.Module, rel: str, packages: set[str]) -> dict[str, str]:
    """{name: dotted module} of the names module `rel`'s imports bind (`import a.b` binds `a`)."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and (base := absolute_import(node, rel, packages)):
            found.update(
                {alias.asname or alias.name: f"{base}.{alias.name}" for alias in node.names if alias.name != "*"}
            )
    return found


def dotted_expression(node: ast.expr) -> str | None:
    """`a.b.c` for a name or a chain of attributes of one, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def absolute_import(node: ast.ImportFrom, rel: str, packages: set[str]) -> str | None:
    """The dotted module a `from ... import` reads, relative imports resolved against module `rel`."""
    if not node.level:
        return node.module
    package = dotted_module(rel, packages)
    if not rel.endswith("/__init__.py"):
        package = package.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return ".".join(part for part in (package, node.module) if part) or None
