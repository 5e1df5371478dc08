"""One emission per module state, each statement emitted once per file: text emitted by one pass (line
counts, spans) is handed on to later passes and to the output, and must equal a fresh codegen of the final
module."""

from __future__ import annotations

import libcst as cst

from repoanchor.perturb.context import FileContext, ProjectInfo
from repoanchor.perturb.engine import PassSpec, _run_passes, rng_for, transform_source
from repoanchor.perturb.speed.emission import FileEmission

SRC = b'''\
def f(a, b):
    """Doc."""
    total = 0
    while a < b:
        total += a
        a += 1
    if total > 3:
        return total
    return b
\x0c
def g(x):
    return x
'''
# comparison-swap emits for its spans, if-true-wrap for its line counts, dead-string-assign needs the code,
# and the last pass finds no site.
PASSES = [
    PassSpec("comparison-swap"),
    PassSpec("if-true-wrap"),
    PassSpec("dead-string-assign", ("kw",)),
    PassSpec("for-to-while"),
]


def test_the_output_is_the_final_modules_own_codegen():
    result = transform_source(SRC, "m.py", PASSES, seed=3, fraction=1.0)
    final, outcomes, code = _run_passes(
        cst.parse_module(SRC),
        SRC.decode(),
        "m.py",
        PASSES,
        3,
        1.0,
        ProjectInfo(),
        check_each=False,
        emission=FileEmission(),
    )
    assert result.outcomes == outcomes
    assert result.new_source == final.bytes
    assert code is None or code == final.code


def test_a_changed_file_is_emitted_never_its_own_text():
    # The form feed makes LibCST's emission differ from the file's text: the output must be the emission.
    result = transform_source(SRC, "m.py", [PassSpec("comparison-swap")], seed=0, fraction=1.0)
    assert result.new_source == cst.parse_module(SRC.replace(b"total > 3", b"3 < total")).bytes


def test_remembered_code_belongs_to_the_passs_own_module_only():
    module, other = cst.parse_module("x = 1\n"), cst.parse_module("y = 2\n")
    ctx = FileContext("t", "m.py", module, rng_for(0, "t", "m.py"))
    ctx.remember_code(other, other.code)
    assert ctx.known_code is None
    ctx.remember_code(module, module.code)
    assert ctx.code == "x = 1\n"
