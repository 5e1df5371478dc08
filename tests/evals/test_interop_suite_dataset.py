"""`repoanchor export suite`: a suite as a SWE-bench-format dataset that swebench's own loader and test-spec
builder accept, as does our load_dataset; each row names its task's image and keeps the task's own fields."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.evals.harness.datasets import load_dataset

SOURCE = "psf__requests-2317"
TASKS = [SOURCE, f"{SOURCE}__perturb-0"]
GOLD = "diff --git a/requests/sessions.py b/requests/sessions.py\n--- a/requests/sessions.py\n"


def grading_row(task: str, commit: str) -> dict:
    """The ground truth's row as the suite builders write it: the dataset row re-pointed at the task's tree."""
    return {
        "repo": "psf/requests", "instance_id": task, "base_commit": commit, "environment_setup_commit": commit,
        "version": "2.4", "patch": GOLD + f"# remapped for {task}\n", "test_patch": "diff --git a/t.py b/t.py\n",
        "problem_statement": "builtin_str(method) breaks binary methods", "hints_text": "", "created_at": "2014-09-26",
        "FAIL_TO_PASS": json.dumps(["test_requests.py::RequestsTestCase::test_binary_put"]),
        "PASS_TO_PASS": json.dumps(["test_requests.py::RequestsTestCase::test_basic_building"]),
    }  # fmt: skip


def write_suite(root, broken: bool = False):
    suite = root / "perturb"
    (suite / "ground_truth").mkdir(parents=True)
    rows = []
    for number, task in enumerate(TASKS):
        commit = f"{number + 1:040x}"
        rows.append({
            "instance_id": task, "problem_statement": f"binary methods break ({task})",
            "base_commit": commit, "repo": "psf/requests", "version": "2.4",
            "repoanchor_suite": "original" if number == 0 else "perturb", "repoanchor_repo": f"repos/{task}",
            "repoanchor_source_instance": SOURCE, "repoanchor_allowed_files": ["requests/sessions.py"],
        })  # fmt: skip
        truth = {"row": grading_row(task, commit)} if not (broken and number) else {"metadata": {}}
        (suite / "ground_truth" / f"{task}.json").write_text(json.dumps(truth))
    (suite / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    images = {TASKS[0]: {"task_id": TASKS[0], "image": "repoanchor/sweb.eval.x86_64.psf_1776_requests-2317:abc"}}
    (root / "perturb.images.json").write_text(json.dumps(images))
    return suite


def test_exported_rows_load_in_swebench_and_in_our_loader(tmp_path):
    suite = write_suite(tmp_path)
    result = CliRunner().invoke(app, ["export", "suite", str(suite), "--out", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["rows"], summary["without_image"]) == (2, 1)
    jsonl = tmp_path / "data" / "perturb" / "test.jsonl"

    from swebench.harness.test_spec.test_spec import make_test_spec
    from swebench.harness.utils import load_swebench_dataset

    loaded = load_swebench_dataset(str(jsonl), instance_ids=TASKS)
    assert [row["instance_id"] for row in loaded] == TASKS
    spec = make_test_spec(loaded[1])  # the harness's own reading of the fields: repo, version, tests
    assert spec.FAIL_TO_PASS == ["test_requests.py::RequestsTestCase::test_binary_put"]
    assert spec.instance_id == TASKS[1]
    assert f"{2:040x}" in spec.eval_script  # its eval script resets the tests to the task's own commit
    ours = load_dataset(jsonl)
    assert ours.errors == []
    by_id = ours.by_id()
    assert by_id[TASKS[0]]["image_name"].startswith("repoanchor/sweb.eval.x86_64.psf_1776_requests-2317")
    # The task's own statement and commit, the remapped gold patch of the variant, the suite's fields kept.
    variant = by_id[TASKS[1]]
    assert variant["problem_statement"].endswith(f"({TASKS[1]})")
    assert variant["base_commit"] == f"{2:040x}"
    assert variant["patch"].endswith(f"# remapped for {TASKS[1]}\n")
    assert variant["repoanchor_suite"] == "perturb"
    parquet = pd.read_parquet(jsonl.with_suffix(".parquet"))
    assert parquet["instance_id"].tolist() == TASKS
    assert load_dataset(jsonl.with_suffix(".parquet")).errors == []


def test_a_task_without_its_grading_row_is_named_and_the_rest_exported(tmp_path):
    suite = write_suite(tmp_path, broken=True)
    result = CliRunner().invoke(app, ["export", "suite", str(suite), "--out", str(tmp_path / "data")])
    assert result.exit_code == 1
    assert f"{TASKS[1]}.json: row: missing" in result.stderr
    assert json.loads(result.stdout)["rows"] == 1


def test_a_folder_that_is_no_suite_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["export", "suite", str(tmp_path), "--out", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "not a suite folder" in result.stderr


@pytest.mark.parametrize("images", ["[1, 2]"])
def test_an_images_file_of_another_shape_exits_2(tmp_path, images):
    suite = write_suite(tmp_path)
    (tmp_path / "perturb.images.json").write_text(images)
    result = CliRunner().invoke(app, ["export", "suite", str(suite), "--out", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "perturb.images.json: expected" in result.stderr
