"""function_names: each function's own bindings agree with CPython's symtable on real code; occurrences,
evaluation scopes, type-hint strings and introspection on small cases."""

from __future__ import annotations

import ast
import importlib.util
import symtable
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from repoanchor.perturb.speed.function_names import function_names

ROOT = Path(__file__).resolve().parents[2]
_NOT_DEFS = {"lambda", "listcomp", "genexpr", "setcomp", "dictcomp"}


def _symtable_functions(table: symtable.SymbolTable) -> list[symtable.SymbolTable]:
    """Function tables of real ``def``s in source order (pre-order, as symtable lists its children)."""
    found = []
    for child in table.get_children():
        if child.get_type() == "function" and child.get_name() not in _NOT_DEFS:
            found.append(child)
        found.extend(_symtable_functions(child))
    return found


def _not_ours(function: ast.AST) -> set[str]:
    """Locals symtable sees that function_names deliberately places elsewhere or ignores: a walrus target inside
    a comprehension (recorded in the comprehension) and a name only ever deleted."""
    comps = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    walrus = {
        n.target.id
        for comp in ast.walk(function)
        if isinstance(comp, comps)
        for n in ast.walk(comp)
        if isinstance(n, ast.NamedExpr)
    }
    deleted = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
    return walrus | deleted


def _corpus() -> list[Path]:
    own = sorted((ROOT / "perturb").rglob("*.py")) + sorted((ROOT / "evals").rglob("*.py"))
    stdlib = [Path(importlib.util.find_spec(name).origin) for name in ("argparse", "asyncio.tasks", "email.message")]
    return own[::3] + stdlib


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_each_function_binds_what_symtable_says_it_binds(path):
    source = path.read_text(encoding="utf-8")
    ours = function_names(cst.parse_module(source)).functions
    theirs = _symtable_functions(symtable.symtable(source, str(path), "exec"))
    defs = [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    by_line = {(n.name, n.lineno): n for n in defs}
    assert [s.node.name.value for s in ours] == [t.get_name() for t in theirs]
    for scope, table in zip(ours, theirs, strict=True):
        local = {s.get_name() for s in table.get_symbols() if s.is_local()}
        mine = set(scope.bindings) - scope.declared
        tolerated = _not_ours(by_line[(table.get_name(), table.get_lineno())])
        assert mine <= local, (table.get_name(), mine - local)
        assert local - mine <= tolerated, (table.get_name(), local - mine)


def _names(code: str):
    return function_names(cst.parse_module(textwrap.dedent(code)))


def test_defaults_decorators_and_annotations_are_read_where_the_def_stands():
    names = _names(
        """
        def outer(size):
            @wrap(size)
            def inner(x=size, *, y: size = 1) -> size:
                return x
            return inner
        """
    )
    outer, inner = names.functions
    assert len(outer.occurrences["size"]) == 5  # the parameter, the decorator, the default, two annotations
    assert "size" not in inner.occurrences
    assert set(inner.bindings) == {"x", "y"}
    assert outer.bindings["inner"][0].kind == "FunctionDef"
    assert outer.nested == [inner]


def test_a_comprehensions_first_iterable_is_read_outside_it():
    (function,) = _names("def f(rows):\n    return [r for r in rows if r]\n").functions
    (comprehension,) = function.nested
    assert list(function.occurrences) == ["rows"]
    assert set(comprehension.bindings) == {"r"}
    assert len(comprehension.occurrences["r"]) == 3


def test_names_that_are_not_variables_are_not_occurrences():
    (function,) = _names(
        """
        def f(obj):
            import os.path as p, json
            global g
            value = obj.value
            call(value=value)
            match obj:
                case Point(x=px, y=0):
                    return px
            return p, json
        """
    ).functions
    assert {"value", "obj", "call", "px", "Point", "p", "json"} == set(function.occurrences)
    assert [b.kind for b in function.bindings["px"]] == ["capture"]
    assert function.bindings["p"][0].kind == "Import"
    assert function.bindings["json"][0].kind == "Import"
    assert function.declared == {"g"}
    assert len(function.occurrences["value"]) == 2


@pytest.mark.parametrize(
    ("code", "hinted"),
    [
        ("from typing import cast\ndef f(v):\n    n: 'Node' = cast('Tree', v)\n", {"Node", "Tree"}),
        ("import typing as t\ndef f():\n    x = t.Optional['Leaf']\n", {"Leaf"}),
        ("def f(row):\n    total = row['total']\n    return cast('Tree', total)\n", set()),  # no typing import
    ],
)
def test_type_hint_strings_are_words_only_where_a_type_checker_reads_them(code, hinted):
    (function,) = _names(code).functions
    assert function.hinted == hinted


def test_introspection_is_found_for_every_enclosing_function_and_only_those():
    outer, inner, other = _names(
        """
        def outer():
            def inner():
                return sys._getframe().f_back
        def other():
            return locals
        """
    ).functions
    assert outer.introspection == inner.introspection == ".f_back"  # the outermost node is met first
    assert other.introspection is None


def test_self_documenting_fields_and_class_bodies():
    names = _names("def f(a):\n    class K:\n        b = a\n    return f'{a=}'\n")
    (function,) = names.functions
    (klass,) = function.nested
    assert set(klass.bindings) == {"b"}
    assert "a" in klass.occurrences
    assert [id(n) in names.self_documenting for n in function.occurrences["a"]] == [False, True]
