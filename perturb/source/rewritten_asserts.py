"""Modules whose assert statements pytest rewrites: there a failing assert's message shows its expression as written.

pytest rewrites the asserts of test modules and conftest files, and of the modules it is told to: those a
``pytest_plugins`` variable names (pytest's own tests load ``pytester`` so, as ``_pytest.pytester``), those passed to
``pytest.register_assert_rewrite``, and every module of a distribution that registers a ``pytest11`` plugin. Its
message for ``assert {'failed': 1} == {'failed': 0}`` lists the differing items; after double-negation the same
assert reads ``assert not not (...)`` and the items are gone, and pytest's
``test_rewrite_assertions_pytester_plugin``, which expects them from ``Pytester.assert_outcomes``, failed. So in
such a module no pass rewrites anything inside an assert (`refuse_in_asserts`).
"""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path
from typing import Any

import libcst as cst

from repoanchor.perturb.mirage.module_paths import dotted_modules
from repoanchor.perturb.sites import Site, refuse_inside
from repoanchor.perturb.source.metadata_files import first_match
from repoanchor.perturb.source.sourcefile import parsed_quietly
from repoanchor.perturb.traversal.statements import small_statements

MARKS_REWRITES = re.compile(rb"pytest_plugins|register_assert_rewrite")
PLUGIN_ENTRY_POINT = re.compile(r"\b(pytest11)\b")
_METADATA = ("setup.py", "setup.cfg", "pyproject.toml")


def rewritten_modules(root: Path, every: list[str]) -> frozenset[str]:
    """The files (tree-relative) of the modules whose asserts pytest rewrites beyond tests and conftest files."""
    modules = [rel for rel in every if rel.endswith(".py")]
    if any(first_match(root / name, PLUGIN_ENTRY_POINT) for name in _METADATA):
        return frozenset(modules)  # a pytest plugin's distribution: pytest rewrites all of it
    names: set[str] = set()
    for rel in modules:  # plugins declare `pytest_plugins` too (pytest's pytester loads pytester_assertions)
        data = (root / rel).read_bytes()
        if MARKS_REWRITES.search(data):
            names |= _marked(data)
    if not names:
        return frozenset()
    packages = {posixpath.dirname(rel) for rel in modules if rel.endswith("/__init__.py")}
    dotted = dotted_modules(modules, packages)
    dotted |= {rel[:-3]: rel for rel in modules if "/" not in rel}  # modules at the root, in no package
    wanted = names | {f"_pytest.{name}" for name in names}  # pytest's own plugins go by their short names
    return frozenset(rel for name, rel in dotted.items() if any(_within(name, mark) for mark in wanted))


def refuse_in_asserts(sites: list[Site], module: cst.Module, ctx: Any) -> list[Site]:
    """`sites` less those in an assert of a module pytest rewrites, each refused with `ctx.skip`."""
    if ctx.path not in ctx.project.rewritten_asserts or not sites:
        return sites
    why = "rewritten-assert: pytest rewrites this module's asserts, and a failing one's message shows it as written"
    asserts = (id(node) for node, _ in small_statements(module, cst.Assert))
    return refuse_inside(sites, module, dict.fromkeys(asserts, why), ctx)


def _marked(data: bytes) -> set[str]:
    """Module names a module's source marks for rewriting: strings assigned to `pytest_plugins`, and the string
    arguments of `register_assert_rewrite` calls."""
    if (tree := parsed_quietly(data)) is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytest_plugins" for t in node.targets):
            found |= _strings(node.value)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == (
            "register_assert_rewrite"
        ):
            found |= {s for arg in node.args for s in _strings(arg)}
    return found


def _strings(node: ast.expr) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return {s for element in node.elts for s in _strings(element)}
    return set()


def _within(name: str, mark: str) -> bool:
    return name == mark or name.startswith(mark + ".")
