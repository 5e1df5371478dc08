"""A listing of an instance's members lists its class's: dead-method leaves that class alone.

sympy 1.13.3's ``test_predicates`` collects ``getattr(Q, attr) for attr in Q.__class__.__dict__`` and checks each
is a predicate; ``Q = AssumptionKeys()`` in ``sympy/assumptions/ask.py``, re-exported by ``sympy.assumptions``.
dead-method added its method to ``AssumptionKeys``, and the bound method failed the check."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from repoanchor.perturb.results import Skipped
from repoanchor.perturb.source.enumerations import IMPORTED, enumerated_classes
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree, run_tests

KEYS = """class Keys:
    @property
    def positive(self):
        return "positive"

    @property
    def real(self):
        return "real"


Q = Keys()
"""
TEST = """from pkg import Q


def test_every_key_is_a_name():
    keys = [getattr(Q, attr) for attr in Q.__class__.__dict__ if not attr.startswith("__")]
    assert all(isinstance(key, str) for key in keys)
"""


@pytest.mark.parametrize(
    ("code", "listed"),
    [
        ("Q = Keys()\n\n\ndef names():\n    return dir(Q)\n", {"Keys"}),  # a module-level instance, in a function
        ("def names():\n    return vars(Q)\n\n\nQ = Keys()\n", {"Keys"}),  # made below the function
        ("from pkg.keys import Q\n\n\ndef names():\n    return Q.__class__.__dict__\n", {"Q", f"{IMPORTED}pkg.keys.Q"}),
        ("def names(Q):\n    return dir(Q)\n", {"Q"}),  # a parameter: no instance to follow
        ("from .keys import Q\n\n\ndef names():\n    return vars(Q)\n", {"Q", f"{IMPORTED}keys.Q"}),  # relative
        ("from . import Q\n\n\ndef names():\n    return vars(Q)\n", {"Q", f"{IMPORTED}.Q"}),  # any module
    ],
)
def test_listed_instances_name_their_class_or_where_to_find_it(code: str, listed: set[str]):
    assert enumerated_classes(ast.parse(code)) == listed


LISTED_IN_PACKAGE = """from .keys import Q


def names():
    return [getattr(Q, attr) for attr in Q.__class__.__dict__ if not attr.startswith("__")]
"""
TEST_OF_PACKAGE = """from pkg.names import names


def test_every_key_is_a_name():
    assert all(isinstance(key, str) for key in names())
"""
TREES = {
    "imported": {"tests/test_keys.py": TEST},
    "module attribute": {"tests/test_keys.py": TEST.replace("from pkg import Q", "from pkg import keys\n\nQ = keys.Q")},
    "relative import": {"pkg/names.py": LISTED_IN_PACKAGE, "tests/test_keys.py": TEST_OF_PACKAGE},
}


@pytest.mark.parametrize("tree", TREES)
def test_dead_method_leaves_the_class_of_a_listed_imported_instance_alone(tmp_path: Path, tree: str):
    files = {"pkg/__init__.py": "from pkg.keys import Q\n", "pkg/keys.py": KEYS, **TREES[tree]}
    src = make_tree(tmp_path / "src", files)
    config = ApplyConfig(["dead-method"], fraction=1.0, seed=0, transform_keywords={"dead-method": ["probe"]})
    report = apply_tree(src, tmp_path / "out", config)
    reasons = [o.reason for o in report.outcomes if isinstance(o, Skipped) and o.file == "pkg/keys.py"]
    assert "enumerated: the members of Keys are listed (dir, vars, __dict__, getmembers)" in reasons, reasons
    assert "def probe" not in (tmp_path / "out" / "pkg" / "keys.py").read_text()
    run = run_tests(tmp_path / "out")
    assert run.returncode == 0, run.stdout
