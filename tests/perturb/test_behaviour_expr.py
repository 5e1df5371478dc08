"""Behaviour of the expression transformations: operand-permute and string-split.

Each is applied at every site (fraction 1.0) to a corpus below; the original and the rewritten
module are exec'd into fresh namespaces and every public function is called on the same
hypothesis-drawn inputs, comparing the repr of the result (so NaN compares equal to NaN and
-0.0 differs from 0.0) or the type and message of the exception raised. A property test then
checks string-split's re-escaping over arbitrary text (lone surrogates included), at every
possible cut.
"""

from __future__ import annotations

import ast
import json
import random
import warnings
from collections.abc import Callable
from functools import cache

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repoanchor.perturb.context import FileContext, ProjectInfo
from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.transforms import get_transform

NUMERIC = """
SCALE = 3
OFFSET = 0.5
MASK = 0b1010
HUGE = 10**400


class Meter:
    unit = 2

    def __init__(self, a):
        self.reading = float(a)

    def total(self, b):
        y = float(b)
        return self.reading + y + self.unit * SCALE, -self.reading * y + OFFSET


class Counter:
    def __init__(self):
        self.calls = 0

    @property
    def tick(self):
        self.calls += 1
        return self.calls * 10


def chain(a, b, c):
    x, y, z = float(a), float(b), float(c)
    return x + y + z, x * y * z, (x + y) * z, x - y + z, x + (y + z), x * 0.5 + y * 2 + z


def integers(a, b, c):
    i, j, k = int(a), int(b), int(c)
    return i + j * k, i * j + k, i & j | k, i ^ j & k, (i | j) ^ k, ~i & j, -i * j, i + True, (not i) + j


def mixed(a, b, c):
    x = float(a)
    i = int(b)
    w = complex(c, a)
    flag = bool(c)
    return x + i, i * x, w + x, w * i, flag + flag, flag & True, flag * x, flag | flag


def overflow(a, b, c):
    x = float(b)
    return x + SCALE, HUGE + x  # OverflowError either way: the int converts to float


def counters(a, b, xs):
    n = len(xs)
    total = 0
    for i in range(n):
        total = total + i * SCALE
    squares = [k * k + n for k in range(n)]
    return total, squares, n * 2 + SCALE, MASK | n


def ratio(a, b, c):
    x, y = float(a), float(b)
    return x / 2 + y, x % 3 * y


def meter(a, b, c):
    return Meter(a).total(b)


def property_order(a, b, c):
    counter = Counter()
    return counter.tick * 2 + counter.tick


def rebound_by_closure(a, b, c):
    count = int(a)

    def rebind():
        nonlocal count
        count = "text"

    if b > 0:
        rebind()
    return count * 2


def parameters_stay(a, b, c):
    return a + b * c, a * b + c
"""

STRINGS = '''
ESCAPES = [
    "\\x001\\x002", 'it\\'s "quoted"', "back\\\\slash\\ttab\\r\\n", "\\ud800\\udc00 pair", "\\U0001f600 grin", "café",
]
__all__ = ["greet", "lookup", "describe"]


def greet(name):
    """Docstrings must survive: they are __doc__."""
    if name == "admin":
        return "welcome back, " + name
    return "hello %s!" % name


def lookup(name):
    table = {"alpha": 1, "beta": 2, "gamma": 3}
    return table.get(name, "missing"), name in "alphabet", "---".join([name, "tail"])


def describe(name):
    kind = "long name" if len(name) > 4 else "short"
    return f"{kind}: {name!r} {'nested'}", name.startswith("prefix"), name is "same"


def classify(name):
    match name:
        case "stop":
            return "halting"
        case {"kind": "move"}:
            return "moving"
        case _:
            return "unknown " + str(name)


def escapes(name):
    return [text + name for text in ESCAPES]
'''

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ANY_NUMBER = st.one_of(st.integers(), st.floats(), st.booleans(), st.sampled_from([-0.0, 0.0, float("nan")]))
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()))


@cache
def _variant(transform: str, source: str) -> tuple[str, tuple]:
    project = ProjectInfo(min_python=(3, 10))  # the string corpus uses match
    result = transform_source(source.encode(), "pkg/corpus.py", [PassSpec(transform)], fraction=1.0, project=project)
    assert not [o for o in result.outcomes if isinstance(o, Failed)], result.outcomes
    assert result.new_source is not None, result.outcomes
    return result.new_source.decode(), tuple(result.outcomes)


def _load(source: str) -> dict:
    namespace: dict = {"__name__": "corpus"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # `is` with a literal, on purpose
        exec(compile(source, "<corpus>", "exec", dont_inherit=True), namespace)
    return namespace


def _outcome(function: Callable, args: tuple):
    try:
        return "ok", repr(function(*args))
    except Exception as exc:  # the exception itself is the observed behaviour
        return "raised", type(exc).__name__, str(exc)


def _applied(outcomes: tuple) -> dict[str, str]:
    return {site.before: site.after for o in outcomes if isinstance(o, Applied) for site in o.sites}


def _reasons(outcomes: tuple) -> list[str]:
    return [o.reason for o in outcomes if isinstance(o, Skipped)]


NUMERIC_CALLS = ["chain", "integers", "mixed", "overflow", "ratio", "meter", "property_order", "rebound_by_closure"]


@SETTINGS
@given(a=ANY_NUMBER, b=ANY_NUMBER, c=ANY_NUMBER)
def test_operand_permute_keeps_results_and_errors(a, b, c):
    variant, _ = _variant("operand-permute", NUMERIC)
    original, changed = _load(NUMERIC), _load(variant)
    for name in NUMERIC_CALLS + ["parameters_stay"]:
        assert _outcome(changed[name], (a, b, c)) == _outcome(original[name], (a, b, c)), (name, variant)


@SETTINGS
@given(a=ANY_NUMBER, b=ANY_NUMBER, xs=st.lists(st.integers(), max_size=12))
def test_operand_permute_keeps_counters(a, b, xs):
    variant, _ = _variant("operand-permute", NUMERIC)
    assert _outcome(_load(variant)["counters"], (a, b, xs)) == _outcome(_load(NUMERIC)["counters"], (a, b, xs))


def test_operand_permute_uses_context_and_refuses_what_it_cannot_prove():
    variant, outcomes = _variant("operand-permute", NUMERIC)
    applied = _applied(outcomes)
    # typed only by context: float()/int()/len() results, a range() counter, constants, attributes
    assert applied["n * 2"] == "2 * n"
    assert applied["i * SCALE"] == "SCALE * i"
    assert applied["self.unit * SCALE"] == "SCALE * self.unit"
    assert applied["x + y + z"] == "z + (y + x)"
    assert applied["HUGE + x"] == "x + HUGE"
    assert applied["i & j | k"] == "k | j & i"  # & binds tighter: no parentheses needed
    assert len(applied) >= 30, applied
    assert not {"a + b * c", "count * 2", "counter.tick * 2"} & set(applied)
    reasons = _reasons(outcomes)
    assert "uninferable operand: a (its bindings here)" in reasons  # a parameter: refused before astroid
    assert "uninferable operand: count" in reasons
    assert any(r.startswith("effectful operand: counter.tick") for r in reasons)
    assert any(r.startswith("effectful operand: Divide") for r in reasons)
    assert any(r.startswith("effectful operand: Modulo") for r in reasons)


def test_float_chain_keeps_its_grouping():
    """(a + b) + c and c + (b + a) are equal for floats; c + b + a is not, and would show it."""
    variant, _ = _variant("operand-permute", NUMERIC)
    assert _load(variant)["chain"](1.0, 1e16, -1e16) == _load(NUMERIC)["chain"](1.0, 1e16, -1e16)
    assert (-1e16 + 1e16) + 1.0 != (1.0 + 1e16) + -1e16  # the trap the parentheses avoid


def test_long_chain_stays_within_the_parenthesis_limit():
    """Each swap down a left spine adds a level of parentheses; CPython's parser allows 200."""
    source = "A = 1.5\nX = " + " + ".join(["A"] * 300) + "\n"
    result = transform_source(source.encode(), "m.py", [PassSpec("operand-permute")], fraction=1.0)
    assert not [o for o in result.outcomes if isinstance(o, Failed)], result.outcomes
    assert sum(len(o.sites) for o in result.outcomes if isinstance(o, Applied)) >= 50
    assert any(reason.startswith("deep chain") for reason in _reasons(tuple(result.outcomes)))
    assert _load(result.new_source.decode())["X"] == _load(source)["X"]


def test_operand_permute_skips_astroid_without_a_possible_site(monkeypatch):
    from astroid.builder import AstroidBuilder

    def refuse(*args, **kwargs):
        raise AssertionError("astroid parsed a file with no possible site")

    monkeypatch.setattr(AstroidBuilder, "string_build", refuse)
    source = "def f(a, b, g):\n    return a - b, g() + 1, 'x' + a\n"
    result = transform_source(source.encode(), "m.py", [PassSpec("operand-permute")], fraction=1.0)
    assert not [o for o in result.outcomes if isinstance(o, Failed)]
    assert "no candidate sites" in _reasons(tuple(result.outcomes))


STRING_CALLS = ["greet", "lookup", "describe", "classify", "escapes"]


@SETTINGS
@given(name=st.one_of(ANY_TEXT, st.sampled_from(["admin", "alpha", "stop", "prefix-x", "same"])))
def test_string_split_keeps_results(name):
    variant, _ = _variant("string-split", STRINGS)
    original, changed = _load(STRINGS), _load(variant)
    for function in STRING_CALLS:
        assert _outcome(changed[function], (name,)) == _outcome(original[function], (name,)), (function, variant)
    assert _outcome(changed["classify"], ({"kind": "move"},)) == ("ok", "'moving'")


def test_string_split_rewrites_values_and_refuses_the_fragile_contexts():
    variant, outcomes = _variant("string-split", STRINGS)
    original, changed = _load(STRINGS), _load(variant)
    assert changed["ESCAPES"] == original["ESCAPES"]
    assert changed["__all__"] == original["__all__"]
    assert changed["greet"].__doc__ == original["greet"].__doc__
    assert len(_applied(outcomes)) >= 15, variant
    reasons = {reason.split(":")[0] for reason in _reasons(outcomes)}
    expected = {"static declaration", "format operand", "f-string", "identity comparison", "match pattern"}
    assert expected <= reasons


class _FixedCut(random.Random):
    """An RNG whose every draw of a cut returns `cut`: lets a test visit every cut."""

    def __init__(self, cut: int) -> None:
        super().__init__(0)
        self.cut = cut

    def randint(self, a: int, b: int) -> int:
        assert a <= self.cut <= b
        return self.cut


def _split_at(source: str, cut: int) -> str:
    module = cst.parse_module(source)
    ctx = FileContext("string-split", "m.py", source, _FixedCut(cut))
    transform = get_transform("string-split")
    sites = transform.candidates(module, ctx)
    assert len(sites) == 1, ctx.skips
    return transform.apply(module, sites, ctx).code


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(exclude_categories=()), min_size=4, max_size=24))
def test_split_literal_evaluates_back_at_every_cut(text):
    # json spells a non-BMP character as a surrogate pair, which Python reads as two code points
    for spelled in (repr(text), json.dumps(text), "u" + repr(text)):
        value = ast.literal_eval(spelled)
        for cut in range(1, len(value)):
            code = _split_at(f"VALUE = {spelled}\n", cut)
            expression = cst.parse_module(code).body[0].body[0].value
            assert isinstance(expression, cst.BinaryOperation), code
            assert ast.literal_eval(expression.left.value) == value[:cut]
            assert ast.literal_eval(expression.right.value) == value[cut:]
            namespace: dict = {}
            exec(compile(code, "<split>", "exec"), namespace)
            assert namespace["VALUE"] == value


@pytest.mark.parametrize(
    ("spelled", "cut", "expected"),
    [
        (r'"\x001\x002"', 2, r'("\x001" + "\x002")'),  # NUL then a digit: \x00, never \0 (octal)
        ('"a\'b\\"c"', 2, '("a\'" + "b\\"c")'),
        ("'\\ud83d\\ude00ab'", 1, "('\\ud83d' + '\\ude00ab')"),  # two code points, two escapes
        ("'😀abc'", 1, "('😀' + 'abc')"),  # raw where the original was raw
        ("'\\U0001f600abc'", 1, "('\\U0001f600' + 'abc')"),
    ],
)
def test_split_spelling(spelled: str, cut: int, expected: str):
    assert _split_at(f"VALUE = {spelled}\n", cut) == f"VALUE = {expected}\n"


RICH = '''
class Sym:
    """Comparisons build objects, as symbolic expressions do (SymPy's StrictLessThan and friends)."""
    def __init__(self, name):
        self.name = name
    def __repr__(self):
        return self.name
    def __lt__(self, other):
        return f"Lt({self!r}, {other!r})"
    def __gt__(self, other):
        return f"Gt({self!r}, {other!r})"
    def __le__(self, other):
        return f"Le({self!r}, {other!r})"
    def __ge__(self, other):
        return f"Ge({self!r}, {other!r})"


def relations(x, lo):
    return [x < lo, lo >= x, x < 0, 0 <= x, -1 > x, x >= 2.5, "a" < x]


RESULT = relations(Sym("x"), Sym("lo"))
'''


def test_comparison_swap_gives_the_same_objects_for_types_whose_comparisons_build_them():
    """Swapping `x < lo` would call lo.__gt__(x) and build Gt(lo, x) instead of Lt(x, lo): refused. With a literal
    operand the builtin answers NotImplemented and the object's own method runs in both spellings: kept."""
    result = transform_source(RICH.encode(), "pkg/mod.py", [PassSpec("comparison-swap")], seed=0, fraction=1.0)
    changed = result.new_source.decode()
    assert "0 > x" in changed
    assert "x >= 0" in changed
    assert "x < lo" in changed
    assert "lo >= x" in changed
    before, after = {}, {}
    exec(compile(RICH, "before", "exec"), before)
    exec(compile(changed, "after", "exec"), after)
    assert after["RESULT"] == before["RESULT"]
    assert before["RESULT"][2] == "Lt(x, 0)"
