"""constant-externalization's `types` option: RepoMirage's released code moves every int and float literal of
the gold files and nothing else (`types: [int, float]`, `keep_trivial: true`, phi = 1); by default strings move
too. The variant's module still binds the same values with the same types."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

ID = "constant-externalization"
MODULE = """RATE = 0.25
LIMIT = 7
NAME = "ledger entry"
FLAG = True
ZERO = 0


def scale(x):
    return x * 3 + LIMIT
"""


def _externalized(tmp_path: Path, options: dict) -> tuple[set, str, dict]:
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/values.py": MODULE})
    out = tmp_path / "out"
    config = ApplyConfig([ID], fraction=1.0, seed=1, options={ID: options}, check_interpreters=False)
    apply_tree(src, out, config)
    resources = [json.loads(p.read_text()) for p in (out / "pkg").glob("*.json")]
    moved = {type(value).__name__ for resource in resources for value in resource.values()}
    return moved, (out / "pkg" / "values.py").read_text(), runpy.run_path(str(out / "pkg" / "values.py"))


@pytest.mark.parametrize(
    ("options", "moved", "kept_in_source"),
    [
        ({"types": ["int", "float"], "keep_trivial": True}, {"int", "float"}, ['"ledger entry"', "True"]),
        ({}, {"int", "float", "str"}, ["True", "= 0\n"]),
    ],
)
def test_types_limit_what_moves(tmp_path, options, moved, kept_in_source):
    kinds, source, namespace = _externalized(tmp_path, options)
    assert kinds == moved
    assert all(text in source for text in kept_in_source)
    values = {key: namespace[key] for key in ("RATE", "LIMIT", "NAME", "FLAG", "ZERO")}
    assert values == {"RATE": 0.25, "LIMIT": 7, "NAME": "ledger entry", "FLAG": True, "ZERO": 0}
    assert [type(v) for v in values.values()] == [float, int, str, bool, int]
    assert namespace["scale"](2) == 13


def test_numbers_only_moves_zero_too(tmp_path):
    _, source, _ = _externalized(tmp_path, {"types": ["int", "float"], "keep_trivial": True})
    assert "ZERO = 0\n" not in source
    assert "RATE = 0.25" not in source


@pytest.mark.parametrize("bad", [["complex"], "int", []])
def test_a_bad_types_option_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="option types must be a list of int, float, str, bool, NoneType"):
        _externalized(tmp_path, {"types": bad})
