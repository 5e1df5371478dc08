"""Packages listed by their dotted name: a call that finds a package's modules from its name lists its folder.

werkzeug 3.1's ``test_find_modules`` asserts ``list(utils.find_modules("werkzeug.debug"))`` is the three modules
of ``werkzeug/debug``; ``find_modules`` imports the name and lists the package's ``__path__``, so proxy-imports'
and masking's new modules there were found too, and the test failed. Which folder such a call lists is known only
from the call: a call whose function's name ends in ``modules``, ``packages`` or ``plugins`` (``find_modules``,
``iter_modules``, ``walk_packages``, ``load_plugins``, ``import_submodules``) with a string literal naming a
package of the tree lists that package's folder, and the folders below it where the name says it walks or a
``recursive=True`` asks for it. Any file may hold the call, tests included. A text search finds the candidates:
like the other listing checks, it only ever refuses.
"""

from __future__ import annotations

import ast
import re

from repoanchor.perturb.source.sourcefile import called_name, parsed_quietly

_LISTS_BY_NAME = re.compile(r"(?:modules|packages|plugins)$")
_CALLS = (b"modules(", b"packages(", b"plugins(")
"""What a file holding such a call holds, found by a plain search of bytes (a pattern took 1.7 s over sympy's 1,562
files): the others are not parsed."""


def dotted_listings(data: bytes, packages: dict[str, str]) -> dict[str, bool]:
    """{package folder: recursively} for each call in file `data` that lists a package of `packages` ({dotted
    name: tree-relative folder}) by its name."""
    if not any(call in data for call in _CALLS) or not _quotes_a_package(data, packages):
        return {}
    if (tree := parsed_quietly(data)) is None:
        return {}
    found: dict[str, bool] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _LISTS_BY_NAME.search(called_name(node) or "")):
            continue
        for argument in node.args:
            if isinstance(argument, ast.Constant) and (folder := packages.get(argument.value)) is not None:
                found[folder] = found.get(folder, False) or _recursive(node)
    return found


def _quotes_a_package(data: bytes, packages: dict[str, str]) -> bool:
    return any(f'"{name}"'.encode() in data or f"'{name}'".encode() in data for name in packages)


def _recursive(call: ast.Call) -> bool:
    asked = any(
        k.arg == "recursive" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in call.keywords
    )
    return asked or "walk" in (called_name(call) or "")
