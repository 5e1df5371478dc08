"""Functions a JIT compiler compiles are left alone by every transform: numba's nopython mode types only a subset
of Python (pvlib 0.8's `spa.py`: constant-externalization's dict global failed test_get_extra_radiation_nrel_numba).
The compiler is often reached through a name the module binds (`jcompile = jit`), and still recognised."""

from __future__ import annotations

import libcst as cst
import pytest

from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Skipped
from repoanchor.perturb.source.jit_compiled import compiled_by, compiled_functions, jit_aliases
from repoanchor.perturb.transforms import SPT_IDS
from repoanchor.perturb.tree import ApplyConfig, apply_tree

# pvlib 0.8's spa.py, in short: the compiler is chosen at import, under a name of the module's own.
SOURCE = '''\
import os


def nocompile(*args, **kwargs):
    return lambda func, *args, **kwargs: func


if os.getenv("USE_NUMBA", "0") != "0":
    try:
        from numba import jit
    except ImportError:
        jcompile = nocompile
    else:
        jcompile = jit
else:
    jcompile = nocompile


@jcompile("float64(int64, int64)", nopython=True)
def compiled(year, month):
    """Julian day, as spa.py counts it."""
    total = 0.0
    if month <= 2 and year > 0:
        year = year - 1
        month = month + 12
    for i in range(3):
        if i > 1:
            total += 365.25 * (year + 4716)
        else:
            total += 30.6001 * (month + 1)
    while total > 1e9:
        total -= 1
    return total


def plain(year, month):
    """Julian day, as spa.py counts it."""
    total = 0.0
    if month <= 2 and year > 0:
        year = year - 1
        month = month + 12
    for i in range(3):
        if i > 1:
            total += 365.25 * (year + 4716)
        else:
            total += 30.6001 * (month + 1)
    while total > 1e9:
        total -= 1
    return total


class Orbit:
    def period(self, a, b):
        return a * b + 0.5 if a < b else b - a
'''
REASON = "jit-compiled: compiled is compiled by @jcompile, which types only a subset of Python"


@pytest.mark.parametrize("transform", SPT_IDS)
def test_no_transform_touches_a_compiled_function(transform):
    result = transform_source(SOURCE.encode(), "m.py", [PassSpec(transform, ("period",))], fraction=1.0, seed=3)
    output = result.new_source.decode() if result.new_source is not None else SOURCE
    assert _function(output, "compiled") == _function(SOURCE, "compiled")
    assert _behaviour(output) == _behaviour(SOURCE)


@pytest.mark.parametrize("transform", ["if-true-wrap", "dead-code", "try-reraise-wrap", "for-to-while", "local-rename"])
def test_its_plain_twin_is_rewritten_and_the_refusal_says_why(transform):
    result = transform_source(SOURCE.encode(), "m.py", [PassSpec(transform)], fraction=1.0, seed=3)
    assert _function(result.new_source.decode(), "plain") != _function(SOURCE, "plain")
    reasons = {o.reason for o in result.outcomes if isinstance(o, Skipped) and o.reason.startswith("jit-")}
    assert reasons == {REASON}


def test_constants_keep_a_compiled_functions_literals(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "spa.py").write_text(SOURCE)
    config = ApplyConfig(["constant-externalization"], fraction=1.0, seed=0, workers=1)
    report = apply_tree(tmp_path / "src", tmp_path / "out", config)
    written = (tmp_path / "out" / "pkg" / "spa.py").read_text()
    assert _function(written, "compiled") == _function(SOURCE, "compiled")
    assert "4716" not in _function(written, "plain")  # the twin's literals moved to JSON
    reasons = [o.reason for o in report.outcomes if isinstance(o, Skipped)]
    assert any(r.startswith("jit-compiled: ") and "literal(s) kept" in r for r in reasons), reasons


@pytest.mark.parametrize(
    ("source", "aliases"),
    [
        (SOURCE, {"jit", "jcompile"}),
        ("import numba\nfast = numba.njit\n", {"fast"}),
        ("from numba import njit as fast, prange\n", {"fast"}),
        ("from numba import jit\nA = jit\nB = A\nC = B\n", {"jit", "A", "B", "C"}),
        ("import numba\nstrict = numba.jit(nopython=True)\n", {"strict"}),
        ("from functools import lru_cache as jitter_free\ncache = lru_cache\n", set()),
        ("def f():\n    from numba import jit as inside\n", set()),
    ],
)
def test_the_names_a_module_binds_to_a_compiler(source, aliases):
    assert jit_aliases(cst.parse_module(source)) == aliases


@pytest.mark.parametrize(
    ("decorator", "compiler"),
    [
        ("@jcompile('float64(float64)', nopython=True)", "jcompile"),
        ("@numba.njit", "numba.njit"),
        ("@njit(cache=True)", "njit"),
        ("@guvectorize(['void(float64[:])'], '(n)')", "guvectorize"),
        ("@jax.jit", "jax.jit"),
        ("@torch.jit.script", "torch.jit.script"),
        ("@tf.function(jit_compile=True)", "tf.function"),
        ("@nb.njit(parallel=True)", "nb.njit"),
        ("@registered(nopython=True)", "registered"),
        ("@functools.lru_cache(maxsize=None)", None),
        ("@property", None),
        ("@cache", None),
    ],
)
def test_which_decorators_compile(decorator, compiler):
    func = cst.parse_module(f"{decorator}\ndef f(x):\n    return x\n").body[0]
    assert compiled_by(func, frozenset({"jcompile"})) == compiler


def test_a_jitclass_is_compiled_whole_and_files_without_a_compiler_are_not_walked():
    source = "from numba.experimental import jitclass\n\n@jitclass([])\nclass C:\n    def m(self):\n        return 1\n"
    assert [name for name, _ in compiled_functions(cst.parse_module(source), source).values()] == ["C"]
    assert compiled_functions(cst.parse_module("def f():\n    return 1\n"), "def f():\n    return 1\n") == {}


def _function(code: str, name: str) -> str:
    module = cst.parse_module(code)
    node = next(s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name)
    return module.code_for_node(node)


def _behaviour(code: str) -> tuple:
    space: dict = {}
    exec(compile(code, "m.py", "exec"), space)
    return space["compiled"](2020, 1), space["plain"](2020, 1), space["Orbit"]().period(2, 3)
