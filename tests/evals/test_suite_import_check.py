"""A suite build's level-1 import check: the variant must import every changed module the original imports.

The original is installed and imported only when a variant's import check fails (and then once per
instance): a module that fails in both (a dependency the environment lacks) is dropped from the task's
must-import list, and a variant that imports everything costs no install beyond its two test runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repoanchor.evals.suites.build import build_suite
from repoanchor.evals.suites.check import validate_suite
from tests.support.version_project import make_version_project

OPTIONAL = '''"""Extras that need a dependency this environment lacks."""

import not_an_installed_dependency_of_verpkg

SPEED_FACTOR = 3
EXTRA_LABEL = "extra"
EXTRA_LIMIT = 250


def scaled(value):
    return value * SPEED_FACTOR if value < EXTRA_LIMIT else EXTRA_LABEL
'''


def _build(root: Path, extra: dict[str, str]) -> tuple[Path, int, dict]:
    """The perturb suite of the version project (every file perturbed), how many installs its build ran, and
    its one task's level-1 record."""
    log = root / "installs.log"
    cache, dataset = make_version_project(root / "src", extra, install=f"echo install >> {log}")
    out = root / "suite"
    build_suite(dataset, "perturb", out, repo_cache=cache, other_file_rate=1.0, progress=False)
    assert (out / "rejected.jsonl").read_text() == ""
    (truth_file,) = (out / "ground_truth").iterdir()
    return out, len(log.read_text().splitlines()), json.loads(truth_file.read_text())["level1"]


@pytest.mark.parametrize("broken", [True, False], ids=["a-module-fails-in-the-original", "all-import"])
def test_the_original_is_installed_for_imports_only_when_a_variant_module_fails(tmp_path, broken):
    out, installs, level1 = _build(tmp_path, {"verpkg/optional.py": OPTIONAL} if broken else {})
    assert "verpkg.rates" in level1["modules"]  # changed, and imports in the variant
    if broken:
        assert "verpkg/optional.py" in level1["files"]  # changed and compiled, but fails to import in both trees
        assert "verpkg.optional" not in level1["modules"]
        assert installs == 3  # the variant's two test runs, and the original's once for its imports
    else:
        assert installs == 2  # the variant's two test runs only
    summary = validate_suite(out)
    assert summary["ok"], summary
