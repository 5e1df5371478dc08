"""Extend tasks on a real variant of the fixture project: every validator accepts its ground truth
and rejects no change, a decoy answer and an out-of-scope edit; other right and wrong answers;
determinism; skip reasons. One variant and one build serve the whole module (real LibCST, real
subprocesses, the project's real tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.evals.demo.fixture_project import DATASET_PATH, materialize_fixture
from repoanchor.evals.suites.extend import (
    ExtendTask,
    FamiliesConfig,
    build_extend_tasks,
    summarize_instance,
    validate_extend,
)
from repoanchor.evals.suites.extend.base import apply_edit
from repoanchor.evals.suites.extend.build import FAMILY_IMPL
from repoanchor.evals.suites.extend.common import clone, read_json
from repoanchor.perturb.metadata import variant_metadata
from repoanchor.perturb.tree import ApplyConfig, apply_tree

MIRAGE = ["proxy-imports", "runtime-target-masking", "constant-externalization"]
ERASING = ["proxy_chain", "runtime_target", "missing_constant"]
ROWS = {row["instance_id"]: row for row in map(json.loads, DATASET_PATH.read_text().splitlines())}
FAST_TESTS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _config(**changes) -> FamiliesConfig:
    return FamiliesConfig(test_env=FAST_TESTS, **changes)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The ledger project as its repository holds it (with the files written at materialisation)."""
    repo, _ = materialize_fixture(tmp_path_factory.mktemp("fixture"))
    return repo


@pytest.fixture(scope="module")
def variant(project, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("extend") / "variant"
    config = ApplyConfig(MIRAGE, fraction=1.0, seed=1, workers=1, check_interpreters=False)
    report = apply_tree(project, out, config)
    return out, variant_metadata(project, config, report)


@pytest.fixture(scope="module")
def built(variant, tmp_path_factory) -> dict[str, ExtendTask]:
    tree, metadata = variant
    out = tmp_path_factory.mktemp("suite")
    tasks = build_extend_tasks(
        tree, metadata, ROWS["fixture__ledger-1"], out, families_config=_config(families=ERASING), seed=7
    )
    return {task.family: task for task in tasks}


@pytest.fixture
def worktree(tmp_path):
    def checkout(task: ExtendTask, edit: dict | None = None) -> Path:
        path = tmp_path / f"w{len(list(tmp_path.iterdir()))}"
        clone(Path(task.repo), path)
        apply_edit(path, edit or {})
        return path

    return checkout


def _gt(task: ExtendTask) -> dict:
    return read_json(Path(task.ground_truth))


@pytest.mark.parametrize("family", ERASING)
def test_every_task_is_built_and_self_checked(built, family):
    task = built[family]
    assert task.status == "ok", task.reason
    assert task.self_check.status == "passed"
    stages = {name: case.failed_stage for name, case in task.self_check.cases.items()}
    assert stages == {"ground_truth": None, "no_change": "dynamic", "decoy": "dynamic", "out_of_scope": "scope"}
    repo = Path(task.repo)
    assert not (repo / "ground_truth").exists()
    assert Path(task.ground_truth).parent != repo
    assert not Path(task.ground_truth).is_relative_to(repo)
    visible = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout
    assert "ground_truth" not in visible
    assert task.allowed_files
    for path in task.allowed_files:
        assert f"`{path}`" in task.prompt  # named explicitly, unlike the prior work


@pytest.mark.parametrize("family", ERASING)
def test_validator_accepts_ground_truth(built, worktree, family):
    task = built[family]
    result = validate_extend(task, worktree(task, _gt(task)["solution"]))
    assert result.passed, result.reasons
    assert result.checks == {"scope": True, "dynamic": True, "tests": True}


@pytest.mark.parametrize("family", ERASING)
def test_validator_rejects_no_change(built, worktree, family):
    result = validate_extend(built[family], worktree(built[family]))
    assert not result.passed
    assert result.failed_stage == "dynamic"


@pytest.mark.parametrize("family", ERASING)
def test_validator_rejects_the_decoy(built, worktree, family):
    task = built[family]
    result = validate_extend(task, worktree(task, FAMILY_IMPL[family].decoy(_gt(task))))
    assert not result.passed
    assert result.failed_stage == "dynamic", result.reasons


@pytest.mark.parametrize("family", ERASING)
def test_validator_rejects_an_untracked_file_next_to_the_answer(built, worktree, family):
    task = built[family]
    solution = _gt(task)["solution"]
    path = worktree(task, {"files": {**solution["files"], "ledger/notes.py": "X = 1\n"}})
    result = validate_extend(task, path)
    assert not result.passed
    assert result.failed_stage == "scope"
    assert "ledger/notes.py" in result.reasons[0]


def test_proxy_shortcut_is_named(built, worktree):
    task = built["proxy_chain"]
    gt = _gt(task)
    result = validate_extend(task, worktree(task, FAMILY_IMPL["proxy_chain"].decoy(gt)))
    first = gt["erased"][0]
    assert any(f"{first['path']} does not forward" in reason for reason in result.reasons), result.reasons


def test_proxy_eager_forwarding_is_accepted(built, worktree):
    """Semantic, not textual: a link importing from the next one at module level also routes through it."""
    task = built["proxy_chain"]
    gt = _gt(task)
    files = dict(gt["solution"]["files"])
    for item in gt["erased"]:
        files[item["path"]] = f"from .{item['next'].rpartition('.')[2]} import {', '.join(item['names'])}\n"
    result = validate_extend(task, worktree(task, {"files": files}))
    assert result.passed, result.reasons


def test_proxy_link_skipping_its_next_module_is_rejected(built, worktree):
    """Forwarding from the link after next gives the same object but leaves a module unused."""
    task = built["proxy_chain"]
    gt = _gt(task)
    item = gt["erased"][0]
    modules = gt["chains"][item["chain"]]["modules"]
    after_next = modules[modules.index(item["next"]) + 1]
    files = dict(gt["solution"]["files"])
    files[item["path"]] = f"from .{after_next.rpartition('.')[2]} import {', '.join(item['names'])}\n"
    result = validate_extend(task, worktree(task, {"files": files}))
    assert not result.passed
    assert result.failed_stage == "dynamic"
    assert any("never imported" in r or "does not forward" in r for r in result.reasons), result.reasons


def test_runtime_star_import_is_rejected(built, worktree):
    """Right functions, wrong module: mock.patch on the public module would no longer reach them."""
    task = built["runtime_target"]
    target = _gt(task)["targets"][0]
    hidden = Path(target["runtime_path"]).stem
    text = f"from .{hidden} import *\n"
    result = validate_extend(task, worktree(task, {"files": {target["path"]: text}}))
    assert not result.passed
    assert result.failed_stage in {"dynamic", "tests"}
    if result.failed_stage == "dynamic":
        assert any("namespace" in r or "is ledger." in r for r in result.reasons), result.reasons


def test_runtime_other_correct_forwarder_is_accepted(built, worktree):
    task = built["runtime_target"]
    target = _gt(task)["targets"][0]
    hidden, public = Path(target["runtime_path"]).name, Path(target["path"]).name
    text = (
        "import importlib.util as _util\n"
        f"_spec = _util.spec_from_file_location(__name__, __file__[: -len('{public}')] + '{hidden}')\n"
        "del _util\n"
        "exec(_spec.loader.get_code(__name__), globals())\n"
    )
    result = validate_extend(task, worktree(task, {"files": {target["path"]: text}}))
    assert result.passed, result.reasons


def test_constants_reformatted_file_is_accepted_and_wrong_type_named(built, worktree):
    task = built["missing_constant"]
    gt = _gt(task)
    files = {path: json.dumps(data, indent=4, sort_keys=True) for path, data in gt["resources"].items()}
    assert validate_extend(task, worktree(task, {"files": files})).passed
    item = gt["erased"][0]
    wrong = {**gt["resources"][item["path"]], item["key"]: [item["value"]]}
    result = validate_extend(task, worktree(task, {"files": {item["path"]: json.dumps(wrong)}}))
    assert not result.passed
    assert item["key"] in result.reasons[0]


def test_constants_erase_key_and_value(built):
    task = built["missing_constant"]
    gt = _gt(task)
    assert len(gt["erased"]) == 5
    for item in gt["erased"]:
        data = json.loads(Path(task.repo, item["path"]).read_text())
        assert item["key"] not in data
        assert data[item["placeholder_key"]] == "YOUR CODE HERE"
        assert item["key"] not in task.prompt
        assert not isinstance(item["value"], str) or len(item["value"]) < 3 or item["value"] not in task.prompt


def test_constants_keep_values_mode_across_resources(variant, tmp_path):
    """The prior behaviour (values kept under placeholder keys), with entries from both resources."""
    tree, metadata = variant
    config = _config(families=["missing_constant"], missing_constant={"k": 20, "erase": "key"})
    (task,) = build_extend_tasks(tree, metadata, ROWS["fixture__ledger-3"], tmp_path, families_config=config, seed=2)
    assert task.status == "ok", task.reason
    assert task.self_check.status == "passed"
    gt = _gt(task)
    assert len(task.allowed_files) == 2
    for item in gt["erased"]:
        assert json.loads(Path(task.repo, item["path"]).read_text())[item["placeholder_key"]] == item["value"]


def test_same_seed_same_tasks(variant, built, tmp_path):
    tree, metadata = variant
    config = _config(families=ERASING, self_check=False)
    again = build_extend_tasks(
        tree, metadata, ROWS["fixture__ledger-1"], tmp_path / "a", families_config=config, seed=7
    )
    for task in again:
        first = built[task.family]
        assert (task.task_id, task.prompt, task.allowed_files, task.base_commit) == (
            first.task_id,
            first.prompt,
            first.allowed_files,
            first.base_commit,
        )
        assert Path(task.ground_truth).read_bytes() == Path(first.ground_truth).read_bytes()
    other = build_extend_tasks(
        tree, metadata, ROWS["fixture__ledger-1"], tmp_path / "b", families_config=config, seed=8
    )
    assert [t.allowed_files for t in other] != [built[t.family].allowed_files for t in other]


def test_skip_reasons(variant, tmp_path):
    tree, metadata = variant
    config = _config(
        proxy_chain={"k": 500},
        runtime_target={"min_decoys": 50},
        missing_constant={"k": 500},
        self_check=False,
    )
    tasks = build_extend_tasks(tree, metadata, ROWS["fixture__ledger-1"], tmp_path, families_config=config)
    reasons = {t.family: (t.status, t.reason) for t in tasks}
    assert reasons["proxy_chain"][0] == "skipped"
    assert "not enough middle-layer proxy files" in reasons["proxy_chain"][1]
    assert reasons["runtime_target"][0] == "skipped"
    assert "decoy(s), need 50" in reasons["runtime_target"][1]
    assert reasons["missing_constant"][0] == "skipped"
    assert "not enough constants" in reasons["missing_constant"][1]
    assert reasons["multi_file"] == ("skipped", "the gold patch touches 1 Python file(s), need 2")
    assert not (tmp_path / "repos").exists()
    bare = build_extend_tasks(
        tree, {"path_resolution_map": []}, ROWS["fixture__ledger-1"], tmp_path, families_config=config
    )
    assert all(t.status == "skipped" and "not applied" in t.reason for t in bare if t.family in ERASING)


def test_summary_of_the_real_variant(variant):
    _, metadata = variant
    summary = summarize_instance(metadata, ROWS["fixture__ledger-2"])
    assert summary.touched_files == ["ledger/constants.py", "ledger/money.py"]
    assert summary.proxy_count > 10
    assert summary.constant_count >= 5
    assert summary.decoy_count >= 3
    assert summary.middle_layer_candidate_count == 2 * summary.proxy_count  # depth 4: two middle links each


# multi_file: the gold patch applies as is when the gold files are left unperturbed.


def _pytest_grader(task, worktree: Path, gt: dict):
    from repoanchor.evals.suites.extend import ValidationResult

    apply_edit(worktree, {"patch": gt["test_patch"]})
    ids = json.loads(gt["FAIL_TO_PASS"]) + json.loads(gt["PASS_TO_PASS"])
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids]
    proc = subprocess.run(
        cmd, cwd=worktree, capture_output=True, text=True, env={"PYTHONDONTWRITEBYTECODE": "1", **FAST_TESTS}
    )
    return ValidationResult(passed=proc.returncode == 0, reasons=[proc.stdout[-300:]] if proc.returncode else [])


def test_multi_file_self_check_with_a_grader(project, tmp_path):
    row = ROWS["fixture__ledger-2"]
    gold = ["ledger/constants.py", "ledger/money.py"]
    config = ApplyConfig(["proxy-imports", "constant-externalization"], fraction=1.0, seed=3, workers=1,
                         check_interpreters=False, test_patterns=("tests/*", *gold))  # fmt: skip
    report = apply_tree(project, tmp_path / "variant", config)
    metadata = variant_metadata(project, config, report)
    families = _config(families=["multi_file"])
    (task,) = build_extend_tasks(
        tmp_path / "variant", metadata, row, tmp_path / "out", families_config=families, gold_patch=row["patch"],
        grader=_pytest_grader,
    )  # fmt: skip
    assert task.status == "ok", task.reason
    assert task.allowed_files is None
    assert row["problem_statement"].strip() in task.prompt
    assert task.self_check.status == "passed"
    assert {n: c.failed_stage for n, c in task.self_check.cases.items()} == {
        "ground_truth": None,
        "no_change": "grader",
        "decoy": "grader",
        "out_of_scope": "scope",
    }
    (deferred,) = build_extend_tasks(
        tmp_path / "variant", metadata, row, tmp_path / "out2", families_config=families, gold_patch=row["patch"]
    )
    assert deferred.status == "ok"
    assert deferred.self_check.status == "deferred"
    lenient = build_extend_tasks(
        tmp_path / "variant", metadata, row, tmp_path / "out3", families_config=families, gold_patch=row["patch"],
        grader=lambda task, worktree, gt: _pytest_grader(task, worktree, gt).model_copy(update={"passed": True}),
    )  # fmt: skip
    assert lenient[0].status == "rejected"
    assert "no_change: accepted" in lenient[0].reason
