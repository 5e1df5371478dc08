"""Level 1 on projects whose syntax the running Python cannot compile: judged where the original compiles
(`perturb/validation/rejudge.py`), with real interpreters (pyenv's) and real files."""

from __future__ import annotations

from repoanchor.perturb.validation.validate import compile_errors
from tests.support.newer_syntax import GENERIC, GENERIC_BROKEN, GENERIC_RENAMED, PY2, needs_newer, trees


@needs_newer
def test_a_newer_pythons_syntax_is_judged_where_the_original_compiles(tmp_path):
    original, variant = trees(
        tmp_path, {"pkg/g.py": (GENERIC, GENERIC_RENAMED), "pkg/bad.py": (GENERIC, GENERIC_BROKEN)}
    )
    assert set(compile_errors(variant, ["pkg/g.py", "pkg/bad.py"]).errors) == {"pkg/g.py", "pkg/bad.py"}  # as before
    judged = compile_errors(variant, ["pkg/g.py", "pkg/bad.py"], original)
    assert list(judged.errors) == ["pkg/bad.py"]
    assert "which compiles the original" in judged.errors["pkg/bad.py"]
    assert list(judged.notes) == ["pkg/g.py"]
    assert judged.notes["pkg/g.py"].startswith("compiled under Python 3.1")


def test_an_original_no_python_compiles_is_left_to_the_tests_and_an_added_file_is_judged_here(tmp_path):
    original, variant = trees(tmp_path, {"old.py": (PY2, PY2 + "x = 1\n"), "new.py": (None, "def f(:\n")})
    judged = compile_errors(variant, ["old.py", "new.py"], original)
    assert list(judged.errors) == ["new.py"]  # the variant added it: no original excuses it
    assert "no Python here compiles its original" in judged.notes["old.py"]


def test_an_original_that_compiles_here_keeps_the_running_pythons_verdict(tmp_path):
    original, variant = trees(tmp_path, {"m.py": ("x = 1\n", "x = (1\n")})
    judged = compile_errors(variant, ["m.py"], original)
    assert list(judged.errors) == ["m.py"]
    assert judged.notes == {}
    assert "under" not in judged.errors["m.py"]  # judged here, as before this module
