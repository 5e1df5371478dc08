"""The sites the catalogue lists beside a changed test: those the test's code names first, a package's modules
reached through its re-exports, never a module that only shares a one-part name with a standard library one.

SQLAlchemy 2.1.9's all-14 stack changed ``AsInterfaceTest::test_dict``; the list named only
``dialects/mssql/json.py`` (the test imports ``json``), and not ``util/langhelpers.py``, where ``as_interface``
lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, SiteRecord
from repoanchor.perturb.validation.near_sites import locate, sites_near

TEST = """import json

from pkg import util


class AsInterfaceTest:
    def test_dict(self):
        assert util.as_interface({"foo": json.dumps}) is not None

    def test_other(self):
        assert util.other() == 1
"""


def _applied(file: str, *wheres: str) -> Applied:
    return Applied("dead-method", file, tuple(SiteRecord(where, "before", "after") for where in wheres))


@pytest.fixture
def src(tmp_path: Path) -> Path:
    for rel in ("lib/pkg/__init__.py", "lib/pkg/util/__init__.py", "lib/pkg/util/helpers.py", "lib/pkg/d/json.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "test" / "base").mkdir(parents=True)
    (tmp_path / "test" / "base" / "test_utils.py").write_text(TEST)
    return tmp_path


APPLIED = [
    _applied("lib/pkg/d/json.py", "encode/If#1"),
    _applied("lib/pkg/util/__init__.py", "<module>/If#1"),
    _applied("lib/pkg/util/helpers.py", "other/If#1", "as_interface/ClassDef#1", "as_interface.Shell/If#1"),
]


@pytest.mark.parametrize(
    ("test_id", "first"),
    [
        ("test.base.test_utils.AsInterfaceTest::test_dict", ["as_interface/ClassDef#1", "as_interface.Shell/If#1"]),
        ("test/base/test_utils.py::AsInterfaceTest::test_dict", ["as_interface/ClassDef#1", "as_interface.Shell/If#1"]),
        ("test.base.test_utils.AsInterfaceTest::test_other", ["other/If#1"]),
    ],
)
def test_the_sites_a_test_names_come_first_then_the_imported_package(src: Path, test_id: str, first: list[str]):
    near = sites_near(src, test_id, APPLIED)
    wheres = [site["where"] for site in near]
    assert wheres[: len(first)] == first
    assert wheres[len(first)] == "<module>/If#1"  # then the package module the test imports itself
    assert wheres[-1] == "encode/If#1"  # last: a module only under `pkg`, not the standard library's `json`
    assert len(wheres) == 5


def test_an_unknown_test_file_lists_nothing(src: Path):
    assert sites_near(src, "test.base.test_gone::test_x", APPLIED) == []


def test_a_one_part_name_matches_a_module_only_as_its_package(src: Path):
    """`import json` alone: the tree's `pkg/d/json.py` is not the standard library's module."""
    (src / "test" / "base" / "test_json.py").write_text("import json\n\n\ndef test_x():\n    assert json.dumps(1)\n")
    assert sites_near(src, "test.base.test_json::test_x", APPLIED) == []


@pytest.mark.parametrize(
    ("test_id", "inside"),
    [
        ("test.base.test_utils.AsInterfaceTest::test_dict", ["AsInterfaceTest", "test_dict"]),
        ("test/base/test_utils.py::AsInterfaceTest::test_dict[a-b]", ["AsInterfaceTest", "test_dict"]),
        ("test.base.test_utils::test_top[1]", ["test_top"]),
    ],
)
def test_a_junit_id_gives_its_file_and_the_names_inside_it(src: Path, test_id: str, inside: list[str]):
    assert locate(src, test_id) == (src / "test" / "base" / "test_utils.py", inside)
