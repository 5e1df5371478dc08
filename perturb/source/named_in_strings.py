"""Locals a string may name: APIs that evaluate a string find the caller's locals by name, through its frame.

pandas' ``df.query("price > @limit")`` and ``pd.eval("total * 2")``, numexpr's ``evaluate("a + b")``: the
function calls no ``locals()`` (local-rename's introspection check sees none), the library reads the caller's
frame. Renaming ``limit`` would leave ``@limit`` in the string, and the query would fail. So a local is left
alone where a string literal of its function (docstrings aside) holds ``@name``, or reads as a Python expression
in which the name is a variable. A message such as "limit must be positive" is neither, and neither is a string
that is one bare name (a dict key, an attribute's name for ``getattr``).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable

import libcst as cst

from repoanchor.perturb.speed.function_names import NameScope
from repoanchor.perturb.speed.literals import string_value


def string_naming(name: str, scopes: Iterable[NameScope]) -> str | None:
    """The first string literal of `scopes` that may name the local `name` (its code, cut short), or None."""
    for scope in scopes:
        for node in scope.strings:
            if name in node.value and _names(node, name):
                return node.value if len(node.value) <= 40 else node.value[:37] + "..."
    return None


def _names(node: cst.SimpleString, name: str) -> bool:
    value = string_value(node)
    if not isinstance(value, str):
        return False
    if re.search(rf"@{re.escape(name)}\b", value):
        return True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an escape the string holds, read as code
            tree = ast.parse(value.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if type(tree.body) is ast.Name:
        return False
    return any(type(found) is ast.Name and found.id == name for found in ast.walk(tree))
