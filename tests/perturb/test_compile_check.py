"""compile_error parses once under an older grammar floor and reports exactly what a compile under the
running interpreter followed by a parse with the floor's grammar reports (the definition it replaces)."""

from __future__ import annotations

import ast
import sys
import warnings

import pytest

from repoanchor.perturb.validation.compile_check import CURRENT, OLDEST_GRAMMAR, compile_error

CASES = {
    "valid": "def f(x):\n    return [y for y in x if (z := y)]\n",
    "bad in every grammar": "def f(:\n    pass\n",
    "match under an old floor": "match x:\n    case 1:\n        pass\n",
    "parenthesised context managers": "with (open('a') as a, open('b') as b):\n    pass\n",
    "break outside a loop (code generation)": "def f():\n    break\n",
    "return outside a function": "return 1\n",
    "nonlocal at module level (symbol table)": "nonlocal x\n",
    "future import after code": "x = 1\nfrom __future__ import annotations\n",
    "future annotations": "from __future__ import annotations\ndef f(x: Undefined) -> Later: ...\n",
    "null byte": "x = 1\0\n",
    "invalid escape (a warning only)": "x = '\\d'\n",
    "await outside async": "def f():\n    await g()\n",
    "duplicate argument": "def f(a, a):\n    pass\n",
}


def reference_error(code: str, path: str, min_python: tuple[int, int]) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(code, path, "exec", dont_inherit=True)
            if min_python < CURRENT:
                ast.parse(code, path, feature_version=max(min_python, OLDEST_GRAMMAR))
        except (SyntaxError, ValueError) as exc:
            where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
            version = "" if min_python >= CURRENT else f" [checked {CURRENT} and grammar {min_python}]"
            return f"{type(exc).__name__}: {exc.msg if isinstance(exc, SyntaxError) else exc}{where}{version}"
    return None


@pytest.mark.parametrize("floor", [(3, 6), (3, 8), (3, 9), CURRENT])
@pytest.mark.parametrize("case", sorted(CASES))
def test_same_verdict_and_message_as_compile_then_parse(case: str, floor: tuple[int, int]):
    code = CASES[case]
    assert compile_error(code, "m.py", floor) == reference_error(code, "m.py", floor)


def test_the_cases_cover_every_stage():
    verdicts = {case: compile_error(code, "m.py", (3, 8)) for case, code in CASES.items()}
    assert verdicts["valid"] is None
    assert verdicts["future annotations"] is None
    assert "grammar (3, 8)" in verdicts["match under an old floor"]
    assert compile_error(CASES["match under an old floor"], "m.py", CURRENT) is None
    assert "'break' outside loop" in verdicts["break outside a loop (code generation)"]
    assert "nonlocal declaration not allowed at module level" in verdicts["nonlocal at module level (symbol table)"]
    assert verdicts["null byte"].startswith(("ValueError", "SyntaxError"))
    assert sys.version_info[:2] == CURRENT
