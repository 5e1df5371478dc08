"""A project that declares a Python newer than the one running the tool (PEP 695 aliases and generics, PEP 701
f-strings: 3.12): its outputs are compiled by that Python, not judged by the running one, which cannot parse them
(every pass had failed, "output does not compile"); where no such Python is installed, the file is skipped as
uncheckable, saying why, never a pass's failure."""

from __future__ import annotations

import pytest

from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.compile_check import CURRENT, installed_interpreters
from tests.support.trees import make_tree

MODULE = """type Num = int


def first[T](xs: list[T]) -> T:
    if xs:
        return xs[0]
    else:
        raise IndexError("empty")


def label(d):
    if d:
        return f"{d["k"]}"
    else:
        return "none"
"""
PYPROJECT = '[project]\nname = "m"\nversion = "0"\nrequires-python = ">=3.12"\n'
pytestmark = pytest.mark.skipif(CURRENT >= (3, 12), reason="the running Python reads 3.12 syntax itself")


def _tree(tmp_path):
    return make_tree(tmp_path / "src", {"pyproject.toml": PYPROJECT, "m/__init__.py": "", "m/a.py": MODULE})


@pytest.mark.skipif(not installed_interpreters([(3, 12)]), reason="no Python 3.12 installed")
def test_outputs_are_compiled_by_the_declared_python(tmp_path):
    report = apply_tree(_tree(tmp_path), tmp_path / "out", ApplyConfig(["if-else-swap"], fraction=1.0))
    (applied,) = [o for o in report.outcomes if isinstance(o, Applied)]
    assert len(applied.sites) == 2
    assert report.interpreter_checks["3.12"] == 1
    assert "if not xs:" in (tmp_path / "out" / "m" / "a.py").read_text()


def test_without_that_python_the_file_is_uncheckable_not_failed(tmp_path):
    config = ApplyConfig(["if-else-swap", "dead-code"], fraction=1.0, check_interpreters=False)
    report = apply_tree(_tree(tmp_path), tmp_path / "out", config)
    assert not [o for o in report.outcomes if isinstance(o, (Applied, Failed))]
    reasons = {o.transform: o.reason for o in report.outcomes if isinstance(o, Skipped) and o.file == "m/a.py"}
    assert set(reasons) == {"if-else-swap", "dead-code"}
    assert reasons["if-else-swap"].startswith("uncheckable: the file itself does not compile under the checks here")
    assert (tmp_path / "out" / "m" / "a.py").read_text() == MODULE
