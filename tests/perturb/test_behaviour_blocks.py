"""Behaviour of for-to-while, if-true-wrap, dead-code and try-reraise-wrap on running code.

Each transform is applied at every site (fraction 1.0, several seeds) to two inline corpora;
original and variant are exec'd into fresh namespaces and every corpus function is called on
seeded, generated inputs: results (return value, or exception type and message) must agree.
Docstrings, generator-ness and the names bound in modules and classes are compared too.
"""

from __future__ import annotations

import ast
import inspect
import random
import warnings
from collections.abc import Callable

import pytest

from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Failed
from repoanchor.perturb.transforms._predicates import opaque_source

LOOPS = '''
import enum

TABLE = {}
for _key, _value in enumerate("abc"):
    TABLE[_value] = _key
else:
    TABLE["done"] = True


class Shade(enum.Enum):
    LIGHT = 1
    DARK = 2
    for _tone in ("x",):
        pass


def for_else_search(xs, target):
    """Index of target, -1 when absent; negatives are skipped."""
    index = -1
    for i, x in enumerate(xs):
        if x < 0:
            continue
        if x == target:
            index = i
            break
    else:
        index = -1 if index == -1 else -2
    return index


def nested(rows, stop):
    hits = []
    for r, row in enumerate(rows):
        for cell in row:
            if cell == stop:
                break
            if cell % 2:
                continue
            hits.append(cell)
        else:
            if len(row) > 3:
                break
            hits.append(-r)
            continue
        hits.append(("inner-break", r))
    else:
        hits.append("outer-else")
    return hits


def while_inside(xs):
    out = []
    for x in xs:
        n = x
        while n > 0:
            n -= 3
            if n == 1:
                break
        else:
            out.append(n)
            if n == -2:
                break
            continue
        out.append("broke")
        if len(out) > 4:
            break
    else:
        out.append("end")
    return out


def _numbers(n, fail_at):
    for i in range(n):
        if i == fail_at:
            raise ValueError(f"bad {i}")
        yield i * i


def over_generator(n, fail_at):
    total = 0
    for value in _numbers(n, fail_at):
        total += value
    return total


def over_dict(d, mutate):
    seen = []
    for key in d:
        seen.append(key)
        if mutate and key % 3 == 0:
            d[key + 100] = 0
    for key, value in sorted(d.items()):
        seen.append(key * value)
    return seen


def body_raises(xs):
    try:
        for x in xs:
            if x > 5:
                raise KeyError(x)
        return "clean"
    except KeyError as exc:
        return (exc.args, exc.__context__ is None, exc.__cause__ is None)


def _stop_in_body(xs):
    for x in xs:
        if x == 0:
            next(iter([]))
        yield x


def stop_iteration_in_generator(xs):
    return list(_stop_in_body(xs))


class _Picky:
    def __init__(self):
        self.data = {}

    def __setitem__(self, key, value):
        if value < 0:
            raise StopIteration("negative")
        self.data[key] = value


def stop_iteration_in_setter(xs):
    box = _Picky()
    for box["last"] in xs:
        box.data["count"] = box.data.get("count", 0) + 1
    return box.data


def finalisation_order(n, stop):
    log = []

    def produce():
        try:
            for i in range(n):
                yield i
        finally:
            log.append("closed")

    for item in produce():
        if item == stop:
            break
        log.append(item)
    log.append("after")
    return log


def closures(n):
    late, early = [], []
    for i in range(n):
        late.append(lambda: i)
        early.append(lambda i=i: i)
    return [f() for f in late], [f() for f in early]


def unpacking(pairs):
    out = []
    for a, (b, *rest) in pairs:
        out.append((a, b, rest))
    return out


def implicit_tuple(a, b):
    out = 0
    for x in a, b, a * b:
        out = out * 7 + x
    return out


def finally_break(xs):
    log = []
    for x in xs:
        try:
            if x > 3:
                break
            log.append(x)
        finally:
            log.append("f")
    else:
        log.append("else")
    return log


def empty_target(xs):
    for x in xs:
        pass
    return x


class Walker:
    def __init__(self):
        self.current = None

    def walk(self, xs):
        steps = 0
        for self.current in xs:
            steps += 1
        return steps, self.current


def attribute_target(xs):
    return Walker().walk(xs)
'''

BLOCKS = '''
import dataclasses
import enum
import inspect

COUNTER = 0


class Mode(enum.Enum):
    """Modes of operation.

    Members must not change under any rewrite.
    """

    FAST = 1
    SLOW = 2
    AUTO = 3
    OFF = 4
    ON = 5


@dataclasses.dataclass
class Point:
    """A point."""

    x: int = 0
    y: int = 0
    label: str = "p"
    weight: float = 1.0

    def norm(self):
        """Manhattan norm."""
        total = abs(self.x)
        total += abs(self.y)
        total *= self.weight
        total = round(total, 3)
        return total


def classify(n):
    """Classify an integer."""
    if n < 0:
        kind = "negative"
        if n < -10:
            kind = "very " + kind
        size = -n
        return kind, size
    elif n == 0:
        return "zero", 0
    else:
        kind = "positive"
        while n > 100:
            n //= 10
            if n % 7 == 0:
                break
        else:
            kind += "!"
        return kind, n


def bump(times):
    global COUNTER
    before = COUNTER
    for _ in range(times):
        COUNTER += 1
    delta = COUNTER - before
    COUNTER = before
    return delta


def make_counter(start):
    count = start

    def step(by):
        nonlocal count
        count += by
        if count > 50:
            count = 0
        return count

    return [step(k) for k in range(start % 5 + 3)]


def _squares(n):
    """Yield squares, stop early at 49."""
    i = 0
    while i < n:
        value = i * i
        if value == 49:
            return
        yield value
        i += 1


def squares(n):
    return list(_squares(n)), inspect.isgeneratorfunction(_squares)


def chained(x):
    try:
        if x % 3 == 0:
            raise ValueError(x)
        return 10 // (x % 5)
    except ValueError as exc:
        if x % 2:
            raise KeyError(x) from exc
        raise LookupError(x)
    finally:
        pass


def chained_info(x):
    try:
        return chained(x)
    except Exception as exc:
        return (
            type(exc).__name__,
            exc.args,
            type(exc.__cause__).__name__,
            type(exc.__context__).__name__,
            exc.__suppress_context__,
        )


def reraise_in_handler(x):
    try:
        try:
            if x > 2:
                raise OSError(x)
            return x
        except OSError:
            note = "handled"
            if x > 5:
                raise
            note += "!"
            return note
    except OSError as exc:
        return "outer", exc.args, exc.__context__ is None


def exiting(code):
    try:
        if code:
            raise SystemExit(code)
        value = code + 1
        value *= 2
        return value
    except BaseException as exc:
        return type(exc).__name__


def loop_control(xs):
    out = []
    for x in xs:
        if x % 4 == 0:
            continue
        if x > 20:
            break
        out.append(x)
        out.append(-x)
    return out
'''


def _ints(rng: random.Random, n: int = 8, lo: int = -3, hi: int = 9) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(rng.randint(0, n))]


LOOP_CALLS: dict[str, Callable[[random.Random], tuple]] = {
    "for_else_search": lambda r: (_ints(r), r.randint(-1, 6)),
    "nested": lambda r: ([_ints(r, 5, 0, 6) for _ in range(r.randint(0, 4))], r.randint(0, 6)),
    "while_inside": lambda r: (_ints(r, 8, 0, 12),),
    "over_generator": lambda r: (r.randint(0, 8), r.randint(0, 10)),
    "over_dict": lambda r: ({k: r.randint(0, 4) for k in _ints(r, 6, 0, 9)}, r.random() < 0.3),
    "body_raises": lambda r: (_ints(r),),
    "stop_iteration_in_generator": lambda r: (_ints(r, 6, 0, 5),),
    "stop_iteration_in_setter": lambda r: (_ints(r, 6, -2, 5),),
    "finalisation_order": lambda r: (r.randint(0, 6), r.randint(0, 7)),
    "closures": lambda r: (r.randint(0, 4),),
    "unpacking": lambda r: ([(r.randint(0, 3), tuple(_ints(r, 3))) for _ in range(r.randint(0, 3))],),
    "implicit_tuple": lambda r: (r.randint(-5, 5), r.randint(-5, 5)),
    "finally_break": lambda r: (_ints(r, 6, 0, 6),),
    "empty_target": lambda r: (_ints(r, 3),),
    "attribute_target": lambda r: (_ints(r, 4),),
}

BLOCK_CALLS: dict[str, Callable[[random.Random], tuple]] = {
    "classify": lambda r: (r.randint(-30, 3000),),
    "bump": lambda r: (r.randint(0, 5),),
    "make_counter": lambda r: (r.randint(0, 60),),
    "squares": lambda r: (r.randint(0, 12),),
    "chained_info": lambda r: (r.randint(0, 20),),
    "reraise_in_handler": lambda r: (r.randint(0, 9),),
    "exiting": lambda r: (r.choice([0, 0, 1, 2]),),
    "loop_control": lambda r: (_ints(r, 10, 0, 30),),
}

CORPORA = {"loops": (LOOPS, LOOP_CALLS), "blocks": (BLOCKS, BLOCK_CALLS)}
TRANSFORMS = ("for-to-while", "if-true-wrap", "dead-code", "try-reraise-wrap")
SEEDS = (0, 1, 2)


def _variant(source: str, transform: str, seed: int) -> tuple[str, int]:
    result = transform_source(source.encode(), "pkg/corpus.py", [PassSpec(transform)], seed=seed, fraction=1.0)
    assert not [o for o in result.outcomes if isinstance(o, Failed)], result.outcomes
    assert result.new_source is not None, result.outcomes
    sites = sum(len(o.sites) for o in result.outcomes if isinstance(o, Applied))
    return result.new_source.decode(), sites


def _load(source: str) -> dict:
    namespace: dict = {"__name__": "corpus"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(compile(source, "<corpus>", "exec", dont_inherit=True), namespace)
    return namespace


def _outcome(fn: Callable, args: tuple):
    try:
        return "ok", fn(*args)
    except BaseException as exc:  # the exception itself is the observed behaviour
        return "raised", type(exc).__name__, str(exc)


def _public(namespace: dict) -> set[str]:
    return {name for name in namespace if not name.startswith("_")}


def _shape(namespace: dict) -> dict:
    """Docstrings, generator-ness and class members: what a rewrite must not disturb."""
    shape = {}
    for name, value in namespace.items():
        if inspect.isclass(value) and value.__module__ == "corpus":
            shape[name] = (value.__doc__, sorted(vars(value)), list(getattr(value, "__members__", {})))
            shape[name] += (sorted(getattr(value, "__dataclass_fields__", {})),)
        elif inspect.isfunction(value):
            shape[name] = (value.__doc__, inspect.isgeneratorfunction(value), inspect.iscoroutinefunction(value))
    return shape


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("corpus", list(CORPORA))
def test_variant_behaves_like_original(corpus: str, transform: str, seed: int):
    source, calls = CORPORA[corpus]
    variant, sites = _variant(source, transform, seed)
    assert sites >= 2, variant
    original, changed = _load(source), _load(variant)
    assert _shape(changed) == _shape(original)
    if transform == "for-to-while":  # module-level loops may leave private helper names behind
        assert _public(changed) == _public(original)
    else:
        assert set(changed) == set(original)
    for state in ("TABLE", "COUNTER"):  # module-level state built while the module ran
        assert changed.get(state) == original.get(state)
    rng = random.Random(f"{corpus}|{transform}|{seed}")
    for name, draw in calls.items():
        for _ in range(150):
            args = draw(rng)
            expected = _outcome(original[name], _copy(args))
            assert _outcome(changed[name], _copy(args)) == expected, (name, args, variant)


def _copy(args: tuple) -> tuple:
    """Fresh mutable arguments per call: some corpus functions mutate what they get."""
    return tuple(dict(a) if isinstance(a, dict) else a for a in args)


def test_for_to_while_rewrites_every_plain_loop_and_reports_the_class_body_one():
    result = transform_source(LOOPS.encode(), "pkg/corpus.py", [PassSpec("for-to-while")], fraction=1.0)
    loops = [node for node in ast.walk(ast.parse(result.new_source)) if isinstance(node, ast.For)]
    assert [ast.unparse(node.target) for node in loops] == ["_tone"]
    reasons = [o.reason for o in result.outcomes if o.kind == "skipped"]
    assert any(reason.startswith("class body") for reason in reasons)


def test_original_corpus_exercises_the_tricky_paths():
    """Guard the corpus itself: the interesting outcomes must actually occur."""
    loops = _load(LOOPS)
    with pytest.raises(StopIteration):
        loops["stop_iteration_in_setter"]([1, -1, 2])
    with pytest.raises(RuntimeError):
        loops["stop_iteration_in_generator"]([1, 0])
    assert loops["finalisation_order"](5, 1) == [0, "closed", "after"]
    assert loops["body_raises"]([9]) == ((9,), True, True)
    assert loops["nested"]([[1, 2], [7]], 7) == [2, 0, ("inner-break", 1), "outer-else"]
    blocks = _load(BLOCKS)
    assert blocks["chained_info"](3) == ("KeyError", (3,), "ValueError", "ValueError", True)
    assert blocks["chained_info"](6) == ("LookupError", (6,), "NoneType", "ValueError", False)
    assert blocks["reraise_in_handler"](7) == ("outer", (7,), True)


@pytest.mark.parametrize("value", [True, False])
def test_opaque_predicates_have_their_value(value: bool):
    rng = random.Random(f"predicates|{value}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(500):
            code = opaque_source(rng, value)
            assert eval(compile(code, "<predicate>", "eval", dont_inherit=True)) is value, code


def test_opaque_predicates_are_deterministic_by_seed():
    def draw(seed: int) -> list[str]:
        rng = random.Random(seed)
        return [opaque_source(rng, value) for value in (True, False) * 10]

    assert draw(7) == draw(7)
    assert draw(7) != draw(8)


def test_docstring_blocks_are_wrapped_and_keep_their_docstring():
    source = 'def f(x):\n    """Doc."""\n    a = x\n    b = a + 1\n    c = b * 2\n    d = c - 3\n    return d\n'
    for transform, opener in (("if-true-wrap", "    if "), ("try-reraise-wrap", "    try:")):
        variant, sites = _variant(source, transform, 0)
        lines = variant.splitlines()
        assert sites == 1
        assert lines[1] == '    """Doc."""', variant
        assert lines[2].startswith(opener), variant
        assert _load(variant)["f"].__doc__ == "Doc."
        assert _load(variant)["f"](4) == _load(source)["f"](4)


def test_dead_code_names_are_fresh_per_site_and_never_bound():
    source = "class K:\n    a = 1\n\n\ndef f():\n    a = 1\n    return sorted(locals())\n\n\ndef g():\n    return 2\n"
    variant, sites = _variant(source, "dead-code", 3)
    assert sites == 3
    guards = [node for node in ast.walk(ast.parse(variant)) if isinstance(node, ast.If)]
    per_site = [{n.id for n in ast.walk(guard) if isinstance(n, ast.Name)} for guard in guards]
    assert len(per_site) == 3
    assert all(per_site)
    assert len(set().union(*per_site)) == sum(len(names) for names in per_site)
    assert not set().union(*per_site) & {"K", "a", "f", "g", "locals", "sorted"}
    loaded = _load(variant)
    assert sorted(vars(loaded["K"])) == sorted(vars(_load(source)["K"]))
    assert loaded["f"]() == ["a"]
