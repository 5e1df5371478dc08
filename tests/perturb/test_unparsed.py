"""Projects declaring a newer Python than the one running RepoAnchor: the passes that must read every file with this
Python's `ast` (dead-method, the structural passes) refuse while some file does not parse here, naming it; the other
SPTs go on (`perturb/source/unparsed.py`)."""

from __future__ import annotations

import pytest

from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.compile_check import CURRENT
from tests.support.trees import make_tree

pytestmark = pytest.mark.skipif(CURRENT >= (3, 12), reason="PEP 695 parses under the running Python")
NEWER = '[project]\nname = "p"\nversion = "1"\nrequires-python = ">=3.12"\n'
GENERIC = "def first[T](items: list[T]) -> T:\n    return items[0]\n"
PLAIN = "class Box:\n    def get(self, x):\n        if x:\n            return 1\n        else:\n            return 2\n"
PASSES = ["if-else-swap", "dead-method", "proxy-imports", "constant-externalization", "runtime-target-masking"]


def applied(tmp_path, files: dict[str, str]) -> dict[str, set[str]]:
    src = make_tree(tmp_path / "src", files)
    config = ApplyConfig(PASSES, fraction=1.0, workers=1, check_interpreters=False, keywords=["describe"])
    report = apply_tree(src, tmp_path / "out", config)
    kinds: dict[str, set[str]] = {}
    for outcome in report.outcomes:
        kind = (
            "applied" if isinstance(outcome, Applied) else outcome.reason if isinstance(outcome, Skipped) else "failed"
        )
        kinds.setdefault(outcome.transform, set()).add(kind.split(":")[0])
    return kinds


def test_a_file_of_newer_syntax_stops_the_passes_that_read_every_file(tmp_path):
    kinds = applied(tmp_path, {"pyproject.toml": NEWER, "pkg/__init__.py": "", "pkg/g.py": GENERIC, "pkg/m.py": PLAIN})
    assert "applied" in kinds["if-else-swap"]  # it reads each file alone, with LibCST
    assert "newer syntax" not in kinds["if-else-swap"]
    for transform in PASSES[1:]:
        assert kinds[transform] - {"empty"} == {"newer syntax"}, transform  # the empty __init__.py: nothing to read


def test_a_newer_project_whose_files_all_parse_here_is_read_as_before(tmp_path):
    kinds = applied(tmp_path, {"pyproject.toml": NEWER, "pkg/__init__.py": "", "pkg/m.py": PLAIN})
    assert "applied" in kinds["dead-method"]
    assert all("newer syntax" not in found for found in kinds.values())


def test_a_project_declaring_no_newer_python_reads_an_unparseable_file_as_before(tmp_path):
    kinds = applied(tmp_path, {"pkg/__init__.py": "", "pkg/old.py": "print 'py2'\n", "pkg/m.py": PLAIN})
    assert "applied" in kinds["dead-method"]
    assert all("newer syntax" not in found for found in kinds.values())
