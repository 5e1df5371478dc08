"""Functions a test's expected traceback quotes line by line stay as written (`perturb/source/quoted_frames.py`):
glom's tests compare `File "core.py", line ___, in glom` and the line below it, `raise err`."""

from __future__ import annotations

from pathlib import Path

from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.source.quoted_frames import frames_in
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

EXPECTED = """Traceback (most recent call last):
  File "test_error.py", line ___, in _make_stack
    glom(target, spec)
  File "/site-packages/glom/core.py", line 2294, in glom
    raise err
  File "core.py", line 1, in bare
  File "core.py", line 9, in <lambda>
IndexError: list index out of range
"""
CORE = (
    "def glom(target, spec):\n    err = IndexError(spec)\n    if target:\n        raise err\n    return 'fine'\n\n\n"
    "def other(target):\n    result = [target]\n    if target:\n        return result\n    return 'none'\n"
)
TREE = {"pkg/__init__.py": "", "pkg/core.py": CORE, "tests/test_error.py": f"EXPECTED = '''{EXPECTED}'''\n"}


def test_frames_with_their_source_line_below_them():
    assert frames_in(EXPECTED) == {("test_error.py", "_make_stack"), ("core.py", "glom"), ("core.py", "<lambda>")}
    assert frames_in('File "a.py", line 3, in f') == set()  # no line below: nothing quoted


def outcomes(tmp_path: Path, passes: list[str]) -> tuple[list, Path]:
    src = make_tree(tmp_path / "src", TREE)
    config = ApplyConfig(passes, fraction=1.0, workers=1, check_interpreters=False)
    return apply_tree(src, tmp_path / "out", config).outcomes, tmp_path / "out"


def test_the_quoted_function_stays_as_written_and_the_others_change(tmp_path: Path):
    found, out = outcomes(tmp_path, ["local-rename", "if-else-swap", "string-split"])
    text = (out / "pkg/core.py").read_text()
    assert CORE.split("\n\n\n")[0] in text  # glom, line for line
    assert "def other(target):\n    result = [target]" not in text
    refused = {(o.transform, o.reason.split(":")[0]) for o in found if isinstance(o, Skipped) and o.where}
    assert {("local-rename", "quoted-in-test"), ("string-split", "quoted-in-test")} <= refused
    assert {o.transform for o in found if isinstance(o, Applied)} >= {"local-rename", "string-split"}


def test_masking_leaves_the_quoted_file_where_it_is_and_constants_keep_its_literals(tmp_path: Path):
    found, out = outcomes(tmp_path, ["runtime-target-masking", "constant-externalization"])
    reasons = {(o.transform, o.reason.split(":")[0]) for o in found if isinstance(o, Skipped)}
    assert ("runtime-target-masking", "quoted-in-test") in reasons
    assert ("constant-externalization", "quoted-in-test") in reasons
    text = (out / "pkg/core.py").read_text()
    assert "return 'fine'" in text
    assert "return 'none'" not in text  # other's literal moved to JSON


def test_frames_extracted_as_function_and_line_pairs_quote_that_function_anywhere(tmp_path: Path):
    """CPython's contextlib tests: `[(f.name, f.line) for f in traceback.extract_tb(...)]` against
    `('__exit__', 'raise exc_details[1]')`."""
    test = (
        "import traceback\n\n\ndef test_frames():\n"
        "    expected = [('__exit__', 'raise exc_details[1]'), ('_exit_wrapper', 'callback(*args)')]\n"
        "    assert expected == [(f.name, f.line) for f in traceback.extract_tb(None)]\n"
    )
    stack = (
        "class Stack:\n    def __exit__(self, *exc_details):\n        fixed = exc_details\n"
        "        if fixed:\n            raise exc_details[1]\n        return False\n\n"
        "    def push(self, cb):\n        callbacks = [cb]\n        return callbacks\n"
    )
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/stack.py": stack, "tests/test_stack.py": test})
    report = apply_tree(src, tmp_path / "out", ApplyConfig(["local-rename"], fraction=1.0, check_interpreters=False))
    text = (tmp_path / "out" / "pkg/stack.py").read_text()
    assert "        fixed = exc_details\n" in text  # __exit__ as written
    assert "callbacks = [cb]" not in text  # push renamed
    assert any(isinstance(o, Skipped) and o.reason.startswith("quoted-in-test") for o in report.outcomes)


DOCTEST_RUNNER = (
    "def run(example, filename):\n"
    "    code = compile(example, filename, 'single')\n"
    '    exec(compile(example.source, filename, "single",\n'
    "                 0, True))\n"
    "    return code\n\n\n"
    "def other(example):\n    kind = 'single'\n    if example:\n        return kind\n    return None\n"
)
ELIDED = '''"""
    Traceback (most recent call last):
      File ...
        exec(compile(example.source, filename, "single",
      File "<doctest foo[0]>", line 1, in <module>
        raise Exception('x')
    Exception: x
"""
'''


def test_a_frame_a_doctest_elides_quotes_the_function_holding_its_source_line(tmp_path: Path):
    """CPython's doctest tests expect `File ...` and below it `exec(compile(example.source, filename, "single",`,
    a line of `DocTestRunner.__run`: string-split had made `"single"` a concatenation there."""
    assert frames_in(ELIDED.strip('"\n')) >= {("<source line>", 'exec(compile(example.source, filename, "single",')}
    test = f"def test():\n    {ELIDED}"
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/runner.py": DOCTEST_RUNNER, "tests/test_r.py": test})
    report = apply_tree(src, tmp_path / "out", ApplyConfig(["string-split"], fraction=1.0, check_interpreters=False))
    text = (tmp_path / "out" / "pkg/runner.py").read_text()
    assert DOCTEST_RUNNER.split("\n\n\n")[0] in text  # run(), as written
    assert "kind = 'single'" not in text  # other() split
    assert any(isinstance(o, Skipped) and o.reason.startswith("quoted-in-test") for o in report.outcomes)
