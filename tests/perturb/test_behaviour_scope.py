"""Behaviour of the scope-sensitive transformations: every site rewritten, same results on many inputs.

local-rename, dead-string-assign and dead-method are applied at fraction 1.0 to the corpus
below; the original and the rewritten module are exec'd into fresh namespaces and every
public function is called on the same seeded inputs, comparing the return value (or the type
of the exception raised). The corpus leans on what these rewrites could break: closures and
late binding, class bodies and methods nested in functions, comprehension scopes, names that
are unbound again after ``del``/``except ... as``, generators, ``nonlocal``, ``locals()`` and
self-documenting f-strings, and classes with inherited or stdlib methods.
"""

from __future__ import annotations

import ast
import copy
import random
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.transforms.dead_string_assign import string_literal

CORPUS = """
import threading


class Box:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return len(self.log)

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


class Shape:
    sides = 0

    def describe(self):
        return f"{type(self).__name__}:{self.sides}"

    def get(self, key, default=None):
        return getattr(self, key, default)


class Square(Shape):
    sides = 4

    def area(self, n):
        return n * n


class Bag(dict):
    def total(self):
        return sum(self.values())


class Worker(threading.Thread):
    def result(self, n):
        return n + 1


def late_binding(a, b, xs):
    fs = []
    for i in range(a % 5):
        fs.append(lambda: i * b)
    return [f() for f in fs]


def closures(a, b, xs):
    scale = a - b
    def apply(v):
        return v * scale
    shift = lambda v, k=scale: v + k
    scale += 1
    return [apply(x) for x in xs], [shift(x) for x in xs]


def class_in_function(a, b, xs):
    base = a * 2
    class Local:
        start = base
        def grow(self, n):
            return n + base
    return Local.start, Local().grow(b)


def class_body_rebinds(a, b, xs):
    total = a
    class K:
        total = b + 1
        doubled = total * 2
    return total, K.total, K.doubled


def comprehension_scopes(a, b, xs):
    x = a
    squares = [x * x for x in xs]
    pairs = {(k, a): k + b for k in xs if k > x}
    return x, squares, sorted(pairs.items())


def unbinding(a, b, xs):
    tmp = a + b
    del tmp
    try:
        1 / a
    except ZeroDivisionError as err:
        msg = str(err)
    try:
        return tmp
    except NameError as exc:
        first = type(exc).__name__
    try:
        return err
    except NameError as exc:
        return first, type(exc).__name__


def unpacking(a, b, xs):
    lo, hi = sorted((a, b))
    first, *rest = xs or [0]
    count = 0
    for i, x in enumerate(xs):
        if x > hi:
            break
        count += i
    else:
        count = -count
    if (n := len(rest)) > lo:
        count += n
    return lo, hi, first, rest, count


def while_else(a, b, xs):
    i = 0
    found = None
    while i < len(xs):
        if xs[i] == a:
            found = i
            break
        i += 1
    else:
        found = -1
    return found, i


def generator(a, b, xs):
    def gen(limit):
        step = 0
        while step < limit:
            yield step * b
            step += 1
        return
    return list(gen(a % 6))


def with_and_finally(a, b, xs):
    log = []
    with Box(log) as depth:
        log.append(depth)
    try:
        if a > b:
            return log, "early"
        result = b - a
    finally:
        log.append("finally")
    return log, result


def nonlocal_counter(a, b, xs):
    hits = 0
    def bump():
        nonlocal hits
        hits += 1
    for _ in range(a % 4):
        bump()
    return hits


def introspective(a, b, xs):
    mine = a + b
    return sorted(locals())


def self_documenting(a, b, xs):
    value = a * b
    return f"{value=}"


def oneliners(a, b, xs):
    if a > b: return "gt"
    for x in xs: b += x
    return b


def match_capture(a, b, xs):
    kind = "none"
    match xs:
        case [kind, 1]:
            pass
        case [x, y, *_]:
            kind = x + y
    return kind


def shapes(a, b, xs):
    sq = Square()
    return sq.describe(), sq.area(a), sq.get("sides"), sq.get("missing", b), Shape().describe()


def bags(a, b, xs):
    bag = Bag(a=a, b=b)
    return bag.total(), bag.get("a"), bag.get("z", xs), Worker().result(a)
"""

TRANSFORMS = {
    "local-rename": (),
    "dead-string-assign": ('say "hi"\\n\x001', "retry"),
    "dead-method": ("frobnicate", "get"),
}
PROJECT = ProjectInfo(min_python=(3, 10))
EXPECTED_SITES = {
    "local-rename": {
        "late_binding/Name#1",  # fs
        "late_binding/Name#2",  # i, read late by a lambda
        "closures/Name#1",  # scale, read by a nested def and a lambda default
        "class_in_function/Name#1",  # base, read by a class body and a method
        "unbinding/Name#1",  # tmp, deleted then read
        "unbinding/Name#2",  # err, read after the except block unbinds it
        "match_capture/Name#1",  # kind, also bound by a match capture
        "generator.gen/Name#1",  # step
    },
    "dead-string-assign": {
        "generator.gen/SimpleStatementLine#3",  # before the bare return of a generator
        "oneliners/SimpleStatementSuite#1",
        "while_else/SimpleStatementLine#5",  # inside the while's else
        "class_in_function.Local.grow/SimpleStatementLine#1",
    },
    "dead-method": {"Box/ClassDef#1", "Square/ClassDef#1", "Bag/ClassDef#1", "Worker/ClassDef#1"},
}
EXPECTED_SKIPS = {
    "local-rename": {
        ("rebound in nested scope", "class_body_rebinds/Name#1"),
        ("rebound in nested scope", "comprehension_scopes/Name#1"),
        ("global/nonlocal", "nonlocal_counter/Name#1"),
        ("introspection", "introspective/FunctionDef#1"),
        ("self-documenting f-string", "self_documenting/Name#1"),
    },
    "dead-string-assign": {("introspection", "introspective/FunctionDef#1")},
}


def _inputs() -> list[tuple[int, int, list[int]]]:
    rng = random.Random(20_260_612)
    cases = [(0, 0, []), (1, 1, [1, 1]), (3, -2, [3]), (-4, 4, [2, 1, 0]), (5, 9, [9, 5, 3, 1])]
    for _ in range(250):
        xs = [rng.randint(-4, 9) for _ in range(rng.randint(0, 6))]
        cases.append((rng.randint(-4, 9), rng.randint(-4, 9), xs))
    return cases


INPUTS = _inputs()


def _load(source: str) -> dict:
    namespace: dict = {"__name__": "corpus"}
    exec(compile(source, "<corpus>", "exec"), namespace)
    return namespace


def _outcome(function, args):
    try:
        return ("returned", function(*copy.deepcopy(args)))
    except Exception as exc:  # the exception type is part of the behaviour compared
        return ("raised", type(exc).__name__)


def _mismatches(before: str, after: str) -> list[str]:
    old, new = _load(before), _load(after)
    names = sorted(n for n, v in old.items() if isinstance(v, types.FunctionType) and not n.startswith("_"))
    assert len(names) > 15
    found = []
    for name in names:
        for args in INPUTS:
            expected, actual = _outcome(old[name], args), _outcome(new[name], args)
            if expected != actual:
                found.append(f"{name}{args}: {expected} != {actual}")
    return found


def _run(transform: str, seed: int = 0):
    spec = PassSpec(transform, TRANSFORMS[transform])
    result = transform_source(CORPUS.encode(), "corpus.py", [spec], seed=seed, fraction=1.0, project=PROJECT)
    assert not [o for o in result.outcomes if isinstance(o, Failed)], result.outcomes
    assert result.new_source is not None
    return result


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_every_site_rewritten_keeps_behaviour(transform: str):
    result = _run(transform)
    where = {site.where for o in result.outcomes if isinstance(o, Applied) for site in o.sites}
    assert EXPECTED_SITES[transform] <= where
    skips = {(o.reason.split(":")[0], o.where) for o in result.outcomes if isinstance(o, Skipped)}
    assert EXPECTED_SKIPS.get(transform, set()) <= skips
    assert _mismatches(CORPUS, result.new_source.decode()) == []


def test_composed_passes_keep_behaviour():
    specs = [PassSpec(t, k) for t, k in TRANSFORMS.items()]
    result = transform_source(CORPUS.encode(), "corpus.py", specs, seed=7, fraction=0.5, project=PROJECT)
    assert sum(isinstance(o, Applied) for o in result.outcomes) == 3
    assert _mismatches(CORPUS, result.new_source.decode()) == []


def test_harness_detects_a_rename_that_misses_a_closure():
    """Renaming a local without its closure read must show up as a mismatch."""
    broken = CORPUS.replace("    base = a * 2\n", "    renamed = a * 2\n").replace("start = base", "start = renamed")
    assert any(m.startswith("class_in_function(") for m in _mismatches(CORPUS, broken))


def test_dead_method_respects_inherited_and_stdlib_names():
    result = _run("dead-method")
    added = {site.where: site.after for o in result.outcomes if isinstance(o, Applied) for site in o.sites}
    assert "def frobnicate(" in added["Shape/ClassDef#1"]
    assert "def frobnicate(" in added["Square/ClassDef#1"]  # Shape defines get
    assert "def frobnicate(" in added["Bag/ClassDef#1"]  # dict defines get


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_string_literal_round_trips(text: str):
    literal = string_literal(text)
    assert ast.literal_eval(literal) == text
    assert "\n" not in literal
    assert "\x00" not in literal
    ascii_literal = string_literal(text, "latin-1")
    assert ascii_literal.isascii()
    assert ast.literal_eval(ascii_literal) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x007", '"\\x007"'),  # NUL then a digit: \07 would read as one octal escape
        ("a\"b'c", '"a\\"b\'c"'),
        ("back\\slash", '"back\\\\slash"'),
        ("\ud800", '"\\ud800"'),  # a lone surrogate cannot be encoded in any file
        ("\u202e\ufeff\u2028", '"\\u202e\\ufeff\\u2028"'),  # bidi, BOM, line separator
        ("\U0001f600", '"\U0001f600"'),
    ],
)
def test_string_literal_escapes(text: str, expected: str):
    assert string_literal(text) == expected
    assert ast.literal_eval(expected) == text


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=12))
def test_any_keyword_is_inserted_verbatim(keyword: str):
    source = "def f(x):\n    return x\n"
    result = transform_source(source.encode(), "m.py", [PassSpec("dead-string-assign", (keyword,))], fraction=1.0)
    assert not [o for o in result.outcomes if isinstance(o, Failed)]
    tree = ast.parse(result.new_source)
    assign = tree.body[0].body[0]
    assert isinstance(assign, ast.Assign)
    assert ast.literal_eval(assign.value) == keyword


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=12))
def test_dead_method_never_writes_invalid_python(keyword: str):
    source = "class C:\n    def run(self):\n        return 1\n"
    result = transform_source(source.encode(), "m.py", [PassSpec("dead-method", (keyword,))], fraction=1.0)
    assert not [o for o in result.outcomes if isinstance(o, Failed)]
    if result.new_source is not None:
        methods = [n.name for n in ast.parse(result.new_source).body[0].body if isinstance(n, ast.FunctionDef)]
        assert methods == ["run", keyword]
