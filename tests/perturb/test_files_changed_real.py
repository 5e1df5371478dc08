"""The variant metadata's `files_changed` is exactly what a `diff -r` of the two trees lists: every file a
transform wrote (JSON resources, proxy modules, hidden modules, decoys, forwarders) and nothing else, with
all three RepoMirage perturbations on a real project (toolz)."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from repoanchor.perturb.metadata import variant_metadata
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.pypi import fetch_sdist

MIRAGE = ["constant-externalization", "proxy-imports", "runtime-target-masking"]


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _differing(original: Path, variant: Path) -> tuple[set[str], set[str]]:
    """(files new or changed in `variant`, files only in `original`), as `diff -r` reports them."""
    before, after = _files(original), _files(variant)
    changed = {rel for rel in after & before if not filecmp.cmp(original / rel, variant / rel, shallow=False)}
    return changed | (after - before), before - after


@pytest.mark.slow
def test_files_changed_is_the_tree_difference(tmp_path: Path) -> None:
    tree = fetch_sdist("toolz", "1.0.0")
    config = ApplyConfig(MIRAGE, fraction=1.0, file_fraction=0.6, seed=5, check_interpreters=False)
    report = apply_tree(tree, tmp_path / "variant", config)
    listed = set(variant_metadata(tree, config, report)["files_changed"])
    written, removed = _differing(tree, tmp_path / "variant")
    assert listed == written
    assert not removed
    assert {Path(rel).suffix for rel in listed} == {".py", ".json"}
    generated = written - _files(tree)
    assert len(generated) > 10  # proxies, resources, hidden modules and decoys
