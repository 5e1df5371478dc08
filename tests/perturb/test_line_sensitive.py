"""A function that reads its own line numbers keeps them: transforms that move lines refuse its sites, say why,
and still rewrite the rest of the file; transforms that keep every line in place go on inside it."""

from __future__ import annotations

import os
import subprocess
import sys

import libcst as cst
import pytest

from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.source.line_sensitive import line_reading_functions
from repoanchor.perturb.tree import ApplyConfig, apply_tree

SOURCE = '''\
import sys
import traceback


def distance(flag, other):
    """The lines between two reads of the current line, as pyparsing's _trim_arity counts them."""
    first = sys._getframe().f_lineno
    total = 0
    for i in range(3):
        if flag and other:
            total += i
        else:
            total -= i
    while total > 100:
        total -= 1
    return sys._getframe().f_lineno - first, total


def nested():
    start = traceback.extract_stack(limit=1)[-1].lineno

    def inner():
        for _ in range(2):
            pass
        return traceback.extract_stack(limit=1)[-1].lineno - start

    return inner()


def plain(flag, other):
    total = 0
    for i in range(3):
        if flag and other:
            total += i
        else:
            total -= i
    while total > 100:
        total -= 1
    return total
'''
LINE_MOVING = ["if-true-wrap", "dead-code", "try-reraise-wrap", "for-to-while", "if-else-swap", "and-split"]
LINE_MOVING += ["while-unroll"]


def _run(code: str) -> tuple:
    space: dict = {}
    exec(compile(code, "m.py", "exec"), space)
    return space["distance"](True, False), space["nested"](), space["plain"](True, True)


@pytest.mark.parametrize("transform", LINE_MOVING)
def test_line_reading_functions_keep_their_lines_and_the_rest_is_rewritten(transform):
    result = transform_source(SOURCE.encode(), "m.py", [PassSpec(transform)], fraction=1.0, seed=2)
    assert result.new_source is not None, result.outcomes  # plain() was rewritten
    output = result.new_source.decode()
    assert _run(output) == _run(SOURCE)
    refused = {o.reason for o in result.outcomes if isinstance(o, Skipped) and o.reason.startswith("line-sensitive")}
    assert refused <= {
        "line-sensitive: distance reads line numbers (.f_lineno); moving its lines would change them",
        "line-sensitive: nested reads line numbers (.extract_stack); moving its lines would change them",
    }
    assert refused, "each of these transforms has a site inside distance() or nested()"
    for name in ("distance", "nested"):
        assert _function(output, name) == _function(SOURCE, name)


def test_without_the_refusal_the_distance_would_change():
    """What the refusal prevents: the same wrap inside distance() moves its second read (if-true-wrap of its
    loop body, done by hand)."""
    body = "        if flag and other:\n            total += i\n        else:\n            total -= i\n"
    wrapped = "        if True:\n" + "".join(f"    {line}\n" for line in body.splitlines())
    moved = SOURCE.replace(body, wrapped, 1)
    assert _run(moved)[0] != _run(SOURCE)[0]


@pytest.mark.parametrize("transform", ["comparison-swap", "operand-permute", "local-rename"])
def test_transforms_that_keep_lines_in_place_refuse_nothing_for_it(transform):
    result = transform_source(SOURCE.encode(), "m.py", [PassSpec(transform)], fraction=1.0, seed=2)
    assert not any(isinstance(o, Skipped) and o.reason.startswith("line-sensitive") for o in result.outcomes)
    if result.new_source is not None:
        assert _run(result.new_source.decode()) == _run(SOURCE)


def test_a_line_keeping_transform_rewrites_inside_such_a_function():
    result = transform_source(SOURCE.encode(), "m.py", [PassSpec("comparison-swap")], fraction=1.0, seed=2)
    applied = [o for o in result.outcomes if isinstance(o, Applied)]
    assert any(site.where.startswith("distance") for o in applied for site in o.sites)
    assert _run(result.new_source.decode()) == _run(SOURCE)


def test_the_outermost_function_is_named_and_files_without_such_reads_are_not_walked():
    module = cst.parse_module(SOURCE)
    found = sorted(line_reading_functions(module, SOURCE).values())
    assert found == [("distance", ".f_lineno"), ("nested", ".extract_stack")]
    plain = SOURCE.replace("f_lineno", "f_trace").replace("extract_stack", "print_stack")
    assert line_reading_functions(cst.parse_module(plain), plain) == {}


def _function(code: str, name: str) -> str:
    module = cst.parse_module(code)
    node = next(s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name)
    return module.code_for_node(node)


MODULE = '''\
import sys


def distance():
    first = sys._getframe().f_lineno
    banner = """two
lines"""
    return sys._getframe().f_lineno - first, banner


def other():
    return """three
more
lines"""
'''


def test_constants_leave_a_module_with_a_line_reading_function_alone(tmp_path):
    """The loader's lines go above every function: a function reading its absolute line (`f_lineno`) would see
    them moved, and a multi-line literal becoming a one-line load inside distance() would shorten what it
    measures. So the module is refused whole, saying why (it had kept only that function's literals)."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "lines.py").write_text(MODULE)
    config = ApplyConfig(["constant-externalization"], fraction=1.0, seed=0, workers=1)
    report = apply_tree(tmp_path / "src", tmp_path / "out", config)
    reasons = [o.reason for o in report.outcomes if isinstance(o, Skipped) and o.file == "pkg/lines.py"]
    assert reasons == ["line-sensitive: distance reads line numbers (.f_lineno); the loader's lines would move them"]
    assert (tmp_path / "out" / "pkg" / "lines.py").read_text() == MODULE
    code = "from pkg.lines import distance, other; print(distance(), other())"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "out")}
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert ran.stdout.strip() == "(3, 'two\\nlines') three\nmore\nlines"
