"""RepoMirage's own Extend forms, as its preset builds them: runtime-target identification with only the
implementation's file name erased from the forwarder (`runtime_target.erase: reference`), missing-constant
recovery with the values kept under placeholder keys (`missing_constant.erase: key`), one family per instance."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

import pytest

from repoanchor.evals.demo.fixture_project import DATASET_PATH, materialize_fixture
from repoanchor.evals.presets.model import load_preset
from repoanchor.evals.suites.extend import FamiliesConfig, build_extend_tasks
from repoanchor.evals.suites.extend.common import read_json
from repoanchor.perturb.metadata import variant_metadata
from repoanchor.perturb.tree import ApplyConfig, apply_tree

ROW = next(row for row in map(json.loads, DATASET_PATH.read_text().splitlines()) if row["instance_id"].endswith("-1"))


def paper_families() -> FamiliesConfig:
    """The repomirage preset's Extend settings (the family assignment happens across instances, in the suite)."""
    extend = {k: v for k, v in load_preset("repomirage").suite.extend.items() if k != "assign"}
    return FamiliesConfig(test_env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, families=["runtime_target"], **extend)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    project, _ = materialize_fixture(tmp_path_factory.mktemp("fixture"))
    tree = tmp_path_factory.mktemp("extend") / "variant"
    config = ApplyConfig(["runtime-target-masking"], fraction=1.0, seed=1, workers=1, check_interpreters=False)
    metadata = variant_metadata(project, config, apply_tree(project, tree, config))
    out = tmp_path_factory.mktemp("suite")
    (built,) = build_extend_tasks(tree, metadata, ROW, out, families_config=paper_families(), seed=7)
    return built


def test_the_preset_asks_for_the_paper_forms():
    config = paper_families()
    assert (config.runtime_target.erase, config.missing_constant.erase) == ("reference", "key")


def test_only_the_reference_to_the_implementation_is_erased(task):
    assert task.status == "ok", task.reason
    assert task.self_check.status == "passed"  # the truth passes, no change and the decoy answer fail
    gt = read_json(Path(task.ground_truth))
    (target,) = gt["targets"]
    hidden = PurePosixPath(target["runtime_path"]).name
    original = gt["solution"]["files"][target["path"]]
    erased = Path(task.repo, target["path"]).read_text()
    assert erased == original.replace(f'"{hidden}"', '"# YOUR CODE HERE"')
    assert hidden not in erased
    assert hidden.removesuffix(".py") not in task.prompt
    assert "the name of the\nfile that holds the module's implementation was replaced" in task.prompt
