"""Folders a module names by a path built from its own location: `join(dirname(__file__), "../../rules", "L*.py")`,
`Path(__file__).parent / "plugins"`, or `<dotted.package>.__path__` inside a listing call (`listing.py` asks which
package folders a listing module reaches this way).
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable

from repoanchor.perturb.mirage.module_paths import dotted_expression
from repoanchor.perturb.mirage.path_values import folder_of_pattern
from repoanchor.perturb.source.sourcefile import called_name

LISTING_CALLS = ("listdir", "scandir", "iterdir", "glob", "iglob", "rglob", "iter_modules", "walk_packages", "walk")
"""The calls that list a folder; `listing.py`'s text search and the syntax check in `folders_named` share them."""


def folders_named(rel: str, text: str, folders: Iterable[str]) -> list[str]:
    """The `folders` (tree-relative) that module `rel` names by a path built from its `__file__` (a
    string in the same expression: `join(dirname(__file__), "../../rules", "L*.py")`, `Path(__file__).parent /
    "plugins"`), relative to its folder or one above it, or by `<dotted.package>.__path__` in an expression that
    lists (`iter_modules(app.plugins.__path__)`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return folders_named_in(rel, tree, set(folders))


def folders_named_in(rel: str, tree: ast.Module, folders: set[str]) -> list[str]:
    named: list[str] = []
    bases = ancestors(posixpath.dirname(rel))
    for root in expression_roots(tree):
        inside = list(ast.walk(root))
        names = {node.id for node in inside if isinstance(node, ast.Name)}
        if "__file__" in names:
            named += [c for c in _resolved(joined_path(inside), bases) if c in folders]
        if any(isinstance(n, ast.Call) and called_name(n) in LISTING_CALLS for n in inside):
            paths = (n for n in inside if isinstance(n, ast.Attribute) and n.attr == "__path__")
            for dotted in (dotted_expression(n.value) for n in paths):
                tail = dotted.replace(".", "/") if dotted else None
                named += [p for p in folders if tail and (p == tail or p.endswith("/" + tail))]
    return sorted(set(named))


def expression_roots(tree: ast.AST) -> list[ast.expr]:
    """Every expression whose parent is not an expression (a statement's value, a default argument)."""
    roots = []
    for parent in ast.walk(tree):
        if isinstance(parent, ast.expr):
            continue
        roots += [child for child in ast.iter_child_nodes(parent) if isinstance(child, ast.expr)]
    return roots


def joined_path(nodes: list[ast.AST]) -> str | None:
    """The folder the expression's strings name, joined in source order as `os.path.join` and `/` join them
    (`"../../rules", "L*.py"` -> `../../rules`); None where they name none."""
    strings = sorted(
        (n.lineno, n.col_offset, n.value) for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )
    parts = [value for *_, value in strings if value.strip("./") and len(value) <= 200 and not set(value) & set(" \n")]
    return folder_of_pattern(posixpath.join(*parts)) if parts else None


def _resolved(folder: str | None, bases: list[str]) -> list[str]:
    """`folder` against the module's folder and, where it names a folder (not only a pattern), those above."""
    if folder is None:
        return []
    candidates = [
        posixpath.normpath(posixpath.join(base, folder.strip("/"))) for base in (bases if folder else bases[:1])
    ]
    return [c if c != "." else "" for c in candidates if not c.startswith("..")]


def ancestors(folder: str) -> list[str]:
    """`folder` and every folder above it, up to the tree root ("")."""
    found = [folder]
    while folder:
        folder = posixpath.dirname(folder)
        found.append(folder)
    return found
