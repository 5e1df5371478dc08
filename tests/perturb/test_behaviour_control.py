"""Behaviour of the control-flow transformations: every site rewritten, same results on many inputs.

if-else-swap, and-split, double-negation and while-unroll are applied at fraction 1.0 to the
corpus below; the original and the rewritten module are exec'd into fresh namespaces and every
public function is called on the same seeded inputs, comparing the return value (or the type of
the exception raised). `Probe` logs every truth test, so the number and order of evaluations
of a condition is part of each result.
"""

from __future__ import annotations

import copy
import random
import types

import pytest

from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Failed, Skipped

CORPUS = '''
class Probe:
    """A value whose truth test is logged; None raises from __bool__."""

    def __init__(self, value, log):
        self.value = value
        self.log = log

    def __bool__(self):
        self.log.append(self.value)
        if self.value is None:
            raise ValueError("no truth value")
        return bool(self.value)


COUNTER = 0


def while_else_search(a, b, xs):
    i = 0
    while i < len(xs):
        if xs[i] == a:
            break
        i += 1
    else:
        i = -1
    return i


def while_else_plain(a, b, xs):
    out = []
    n = a
    while n > 0:
        out.append(n)
        n -= 2
    else:
        out.append("done")
    return out


def while_continue(a, b, xs):
    i, total = 0, 0
    while i < a:
        i += 1
        if i % 3 == 0:
            continue
        if total > b * 4:
            break
        total += i
    else:
        total = -total
    return total, i


def nested_while(a, b, xs):
    pairs = []
    i = 0
    while i < a:
        j = 0
        while j < b:
            if (i + j) % 4 == 3:
                break
            if j == i:
                j += 1
                continue
            pairs.append((i, j))
            j += 1
        else:
            pairs.append(("inner-done", i))
        i += 1
    else:
        pairs.append("outer-done")
    return pairs


def for_else_around_while(a, b, xs):
    found = []
    for x in xs:
        k = x
        while k > 0:
            k -= 3
            if k == a:
                break
        else:
            found.append(k)
            continue
        found.append(("hit", x))
    else:
        found.append("end")
    return found


def else_with_inner_loop(a, b, xs):
    n, log = a, []
    while n > b:
        n -= 1
        log.append(n)
    else:
        for x in xs:
            if x > a:
                break
            log.append(x)
        else:
            log.append("all")
    return log


def closures(a, b, xs):
    fns = []
    i = 0
    while i < a:
        fns.append(lambda i=i: i * b)

        def plus_len(j=i):
            return j + len(xs)

        fns.append(plus_len)
        i += 1
    late = []
    while len(late) < b % 4:
        late.append(lambda: i)
        i += 1
    return [f() for f in fns + late]


def generator(a, b, xs):
    def gen(n):
        while n > 0:
            yield n
            n -= b if b > 0 else 1
        else:
            yield "stop"

    return list(gen(a))


def probes(a, b, xs):
    log = []
    p, q = Probe(a % 3, log), Probe(b % 2, log)
    r = Probe(None if a == 7 else len(xs) % 2, log)
    if p and q and r:
        res = "all"
    elif q and p:
        res = "qp"
    else:
        res = "none"
    return res, log


def while_probe(a, b, xs):
    log = []
    n = a
    while Probe(n > b, log) and n > 0:
        n -= 1
    else:
        log.append("else")
    return n, log


def conditional_expressions(a, b, xs):
    f = (lambda: a) if b > a else lambda: b
    v = 1 if a > 5 else 2 if b > 5 else 3
    w = [x if x % 2 else -x for x in xs if x]
    z = (not a) if xs else (a and b or xs)
    return f(), v, w, z


def asserts(a, b, xs):
    assert a >= 0 or b >= 0, "both negative"
    assert len(xs) != 3
    return a - b


def classify(a, b, xs):
    if a > 0 and b > 0 and len(xs) > 2:
        kind = "big"
    elif a > 0 and b <= 0:
        kind = "mixed"
    elif a == b:
        kind = "same"
    else:
        kind = "other"
        if xs and xs[0] > a:
            kind += "+"
    return kind


def walrus(a, b, xs):
    it = iter(xs)
    out = []
    while (x := next(it, None)) is not None and x != a:
        out.append(x)
    else:
        out.append("end")
    return out, x


def side_effects(a, b, xs):
    xs = list(xs)
    taken = []
    while xs and xs.pop() != a:
        taken.append(len(xs))
    if xs and xs.pop() > b:
        taken.append("gt")
    else:
        taken.append("le")
    return taken, xs


def try_in_loop(a, b, xs):
    log = []
    i = 0
    while i < a:
        i += 1
        try:
            if i == b:
                break
            if i % 2:
                continue
            log.append(i)
        finally:
            log.append(-i)
    else:
        log.append("else")
    return log


def oneliners(a, b, xs):
    n = a
    while n > b: n -= 1
    if n and b: r = 1
    else: r = 2
    return n, r


def return_in_else(a, b, xs):
    i = 0
    while i < len(xs):
        if xs[i] < 0:
            return ("neg", i)
        i += 1
    else:
        return ("none", i)


def nonlocal_in_nested(a, b, xs):
    count = 0
    n = a
    while n > 0:
        def bump(k=n):
            nonlocal count
            count += k

        bump()
        n -= 1
    return count


def uses_global(a, b, xs):
    global COUNTER
    n = a
    while n > 0 and COUNTER % 50 != 49:
        COUNTER += 1
        n -= 1
    return COUNTER


def loop_with_true(a, b, xs):
    n = 0
    while True:
        n += 1
        if n >= a or n > 10:
            break
    return n
'''

TRANSFORMS = ["if-else-swap", "and-split", "double-negation", "while-unroll"]
EXPECTED_SITES = {
    "if-else-swap": {
        "classify/If#1",
        "oneliners/If#1",
        "probes/If#1",
        "side_effects/If#1",
        "probes/IfExp#1",
        "generator.gen/IfExp#1",
        *(f"conditional_expressions/IfExp#{i}" for i in range(1, 6)),
    },
    "and-split": {
        "classify/If#1",
        "classify/If#2",
        "classify/If#3",
        "oneliners/If#1",
        "probes/If#1",
        "probes/If#2",
        "side_effects/If#1",
    },
    "double-negation": {
        "Probe.__bool__/If#1",
        "asserts/Assert#1",
        "asserts/Assert#2",
        "walrus/While#1",
        "while_probe/While#1",
        "generator.gen/IfExp#1",
        "generator.gen/While#1",
        "loop_with_true/If#1",
        "probes/IfExp#1",
        *(f"classify/If#{i}" for i in range(1, 5)),
        *(f"conditional_expressions/IfExp#{i}" for i in range(1, 6)),
    },
    "while-unroll": {
        "while_else_search/While#1",
        "while_else_plain/While#1",
        "while_continue/While#1",
        "nested_while/While#1",
        "nested_while/While#2",
        "else_with_inner_loop/While#1",
        "closures/While#1",
        "closures/While#2",
        "generator.gen/While#1",
        "while_probe/While#1",
        "walrus/While#1",
        "side_effects/While#1",
        "try_in_loop/While#1",
        "oneliners/While#1",
        "return_in_else/While#1",
        "nonlocal_in_nested/While#1",
        "uses_global/While#1",
        "loop_with_true/While#1",
    },
}
EXPECTED_SKIPS = {
    "while-unroll": {("loop control in else", "for_else_around_while/While#1")},
    "double-negation": {("constant test", "loop_with_true/While#1")},
}


def _inputs() -> list[tuple[int, int, list[int]]]:
    rng = random.Random(20_260_611)
    cases = [(0, 0, []), (7, 7, [7]), (-3, -3, [1, 2, 3]), (12, 0, [-1]), (5, 9, [9, 5, 3, 1])]
    for _ in range(300):
        xs = [rng.randint(-4, 12) for _ in range(rng.randint(0, 8))]
        cases.append((rng.randint(-3, 12), rng.randint(-3, 12), xs))
    return cases


INPUTS = _inputs()


def _load(source: str) -> dict:
    namespace: dict = {"__name__": "corpus"}
    exec(compile(source, "<corpus>", "exec"), namespace)
    return namespace


def _public_functions(namespace: dict) -> list[str]:
    return sorted(
        name for name, value in namespace.items() if isinstance(value, types.FunctionType) and not name.startswith("_")
    )


def _outcome(function, args):
    try:
        return ("returned", function(*copy.deepcopy(args)))
    except Exception as exc:  # the exception type is part of the behaviour compared
        return ("raised", type(exc).__name__)


def _mismatches(before: str, after: str) -> list[str]:
    old, new = _load(before), _load(after)
    names = _public_functions(old)
    assert names == _public_functions(new)
    found = []
    for name in names:
        for args in INPUTS:
            expected, actual = _outcome(old[name], args), _outcome(new[name], args)
            if expected != actual:
                found.append(f"{name}{args}: {expected} != {actual}")
    return found


def _run(passes: list[str], fraction: float = 1.0, seed: int = 0):
    result = transform_source(CORPUS.encode(), "corpus.py", [PassSpec(p) for p in passes], seed=seed, fraction=fraction)
    assert not [o for o in result.outcomes if isinstance(o, Failed)], result.outcomes
    assert result.new_source is not None
    return result


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_every_site_rewritten_keeps_behaviour(transform: str):
    result = _run([transform])
    applied = [o for o in result.outcomes if isinstance(o, Applied)]
    where = {site.where for outcome in applied for site in outcome.sites}
    assert EXPECTED_SITES[transform] <= where
    skips = {(o.reason.split(":")[0], o.where) for o in result.outcomes if isinstance(o, Skipped)}
    assert EXPECTED_SKIPS.get(transform, set()) <= skips
    assert _mismatches(CORPUS, result.new_source.decode()) == []


@pytest.mark.parametrize("seed", range(4))
def test_composed_passes_on_random_subsets_keep_behaviour(seed: int):
    result = _run(["and-split", "double-negation", "while-unroll", "if-else-swap"], fraction=0.6, seed=seed)
    assert sum(isinstance(o, Applied) for o in result.outcomes) == 4
    assert _mismatches(CORPUS, result.new_source.decode()) == []


def test_harness_detects_the_prior_while_else_defect():
    """The earlier unrolling (inner loop without else) loses the else; the comparison must see it."""
    prior = CORPUS.replace(
        "    while n > 0:\n        out.append(n)\n        n -= 2\n    else:",
        "    while n > 0:\n        out.append(n)\n        n -= 2\n"
        "        while n > 0:\n            out.append(n)\n            n -= 2\n        break\n    else:",
    )
    assert prior != CORPUS
    assert any(m.startswith("while_else_plain(") for m in _mismatches(CORPUS, prior))


def test_while_unroll_refuses_a_very_long_loop():
    body = "".join(f"        total += {i}\n" for i in range(120))
    source = f"def f(n):\n    total = 0\n    while n > 0:\n        n -= 1\n{body}    return total\n"
    result = transform_source(source.encode(), "m.py", [PassSpec("while-unroll")], fraction=1.0)
    assert result.new_source is None
    assert any(isinstance(o, Skipped) and o.reason.startswith("large loop") for o in result.outcomes)
