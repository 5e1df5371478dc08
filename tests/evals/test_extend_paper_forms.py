"""RepoMirage's own Extend forms, as its preset builds them: runtime-target identification with only the
implementation's file name erased from the forwarder (`runtime_target.erase: reference`), missing-constant
recovery with the values kept under placeholder keys (`missing_constant.erase: key`), and the code's minimal
baseline prompts, which name no erased file and explain no mechanism (`prompts: minimal`)."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath

import pytest

from repoanchor.evals.demo.fixture_project import DATASET_PATH, materialize_fixture
from repoanchor.evals.presets.model import load_preset
from repoanchor.evals.suites.extend import FamiliesConfig, build_extend_tasks
from repoanchor.evals.suites.extend.common import read_json
from repoanchor.perturb.metadata import variant_metadata
from repoanchor.perturb.tree import ApplyConfig, apply_tree

ROW = next(row for row in map(json.loads, DATASET_PATH.read_text().splitlines()) if row["instance_id"].endswith("-1"))
MIRAGE = ["proxy-imports", "runtime-target-masking", "constant-externalization"]
ERASING = ["proxy_chain", "runtime_target", "missing_constant"]
MECHANISMS = re.compile(r"forward|chain|entry point|implementation|loader|import|proxy|wrapper|decoy", re.IGNORECASE)


def paper_families(**changes) -> FamiliesConfig:
    """The repomirage preset's Extend settings (the family assignment happens across instances, in the suite)."""
    extend = {k: v for k, v in load_preset("repomirage").suite.extend.items() if k != "assign"}
    return FamiliesConfig(test_env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, **extend, **changes)


@pytest.fixture(scope="module")
def variant(tmp_path_factory) -> tuple[Path, dict]:
    project, _ = materialize_fixture(tmp_path_factory.mktemp("fixture"))
    tree = tmp_path_factory.mktemp("extend") / "variant"
    config = ApplyConfig(MIRAGE, fraction=1.0, seed=1, workers=1, check_interpreters=False)
    return tree, variant_metadata(project, config, apply_tree(project, tree, config))


@pytest.fixture(scope="module")
def tasks(variant, tmp_path_factory) -> dict:
    config = paper_families(families=ERASING, self_check=False)
    built = build_extend_tasks(*variant, ROW, tmp_path_factory.mktemp("suite"), families_config=config, seed=7)
    return {task.family: task for task in built}


def test_the_preset_asks_for_the_paper_forms():
    config = paper_families()
    forms = (config.runtime_target.erase, config.missing_constant.erase, config.prompts)
    assert forms == ("reference", "key", "minimal")


@pytest.mark.parametrize("family", ERASING)
def test_the_prompt_names_no_erased_file_and_no_mechanism(tasks, family):
    task = tasks[family]
    assert task.status == "ok", task.reason
    assert task.allowed_files
    for path in task.allowed_files:
        assert path not in task.prompt
        assert PurePosixPath(path).stem not in task.prompt
    assert not MECHANISMS.search(task.prompt), MECHANISMS.search(task.prompt)


def test_only_the_reference_to_the_implementation_is_erased(tasks):
    task = tasks["runtime_target"]
    gt = read_json(Path(task.ground_truth))
    (target,) = gt["targets"]
    hidden = PurePosixPath(target["runtime_path"]).name
    original = gt["solution"]["files"][target["path"]]
    erased = Path(task.repo, target["path"]).read_text()
    assert erased == original.replace(f'"{hidden}"', '"# YOUR CODE HERE"')
    assert hidden not in erased


def test_the_reference_erasure_self_checks(variant, tmp_path):
    config = paper_families(families=["runtime_target"])
    (task,) = build_extend_tasks(*variant, ROW, tmp_path, families_config=config, seed=7)
    assert task.status == "ok", task.reason
    assert task.self_check.status == "passed"  # the truth passes; no change and the decoy answer fail


def test_constants_keep_their_values_under_placeholder_keys(tasks):
    task = tasks["missing_constant"]
    for item in read_json(Path(task.ground_truth))["erased"]:
        assert json.loads(Path(task.repo, item["path"]).read_text())[item["placeholder_key"]] == item["value"]
