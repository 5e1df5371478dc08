"""may_enumerate: a file it passes over is one in which enumerated_classes finds nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from repoanchor.perturb.source.enumerations import enumerated_classes, may_enumerate

ROOT = Path(__file__).parents[2]

LISTS_MEMBERS = {
    "dir(Config)": {"Config"},
    "import inspect\ninspect.getmembers(Plugin)": {"Plugin"},
    "from inspect import getmembers_static as g\nimport inspect\ninspect.getmembers_static(Plugin)": {"Plugin"},
    "class K:\n    def f(self):\n        return self.__dict__": {"K"},
    "def f():\n    obj = Model()\n    return vars(obj)": {"Model"},
    "\uff44\uff49\uff52(Wide)": {"Wide"},  # fullwidth letters: the identifier normalises to `dir`
}
QUIET = ["direction = dirname(path)", "def vars_of(x):\n    return x.variables", "values = getmember(x)", "d = {}"]


@pytest.mark.parametrize("source", list(LISTS_MEMBERS))
def test_code_that_lists_members_is_read(source: str):
    assert may_enumerate(source)
    assert may_enumerate(source.encode())
    assert enumerated_classes(ast.parse(source)) == LISTS_MEMBERS[source]


@pytest.mark.parametrize("source", QUIET)
def test_code_that_cannot_list_members_is_skipped(source: str):
    assert not may_enumerate(source)
    assert enumerated_classes(ast.parse(source)) == set()


def test_no_skipped_file_of_ours_lists_members():
    paths = sorted(
        p for folder in ("anchor", "scaffolds", "perturb", "evals", "tests") for p in (ROOT / folder).rglob("*.py")
    )
    skipped = [p for p in paths if not may_enumerate(p.read_bytes())]
    assert len(skipped) > 100
    for path in skipped:
        assert enumerated_classes(ast.parse(path.read_bytes())) == set(), path


DEFINES_CLASS = [
    "class A:\n    pass\n",
    "if x:\n    class B(object): pass\n",
    "x = 1\n\x0c\nclass C: ...\n",  # a form feed in the indentation
    "x = 1\r\n    class D:\r\n        y = 2\r\n",
    "x = 1\r\rclass E: pass\r",  # old Mac line ends
    "def f():\n\tclass F:\n\t\tpass\n",
    "s = 'ünïcode'\n",  # non-ASCII: always read
]
NO_CLASS = ["x = klass()\n", "y = 'a class'\n", "def classify(): return 1\n", "subclass = 1\n"]


@pytest.mark.parametrize("source", DEFINES_CLASS)
def test_a_file_that_may_define_a_class_is_parsed(source: str):
    from repoanchor.perturb.source.project import may_define_class

    assert may_define_class(source.encode())


@pytest.mark.parametrize("source", NO_CLASS)
def test_a_file_without_a_class_statement_is_passed_over(source: str):
    from repoanchor.perturb.source.project import class_defs, may_define_class

    assert not may_define_class(source.encode())
    assert list(class_defs(ast.parse(source))) == []


def test_no_file_of_ours_passed_over_defines_a_class():
    from repoanchor.perturb.source.project import class_defs, may_define_class

    paths = sorted(p for folder in ("perturb", "evals", "tests") for p in (ROOT / folder).rglob("*.py"))
    skipped = [p for p in paths if not may_define_class(p.read_bytes())]
    assert len(skipped) > 50
    for path in skipped:
        assert list(class_defs(ast.parse(path.read_bytes()))) == [], path
