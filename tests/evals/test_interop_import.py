"""`repoanchor import`: other harnesses' runs in our run layout, read back by grade and results as they are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from repoanchor.evals.analysis.results.units import load_units
from repoanchor.evals.cli.main import app
from repoanchor.evals.runs.grade_runs import grade_matrix
from repoanchor.evals.runs.matrix import MatrixConfig, expand
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from tests.support.bug_repo import FAIL_TO_PASS, ISSUE, grading_row, make_bug_repo, write_ground_truth
from tests.support.foreign_runs import PATCH, openhands_row, write_swe_agent_run
from tests.support.synthetic_matrix import write_suite

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trajectories"


def invoke(*args: str):
    return CliRunner().invoke(app, ["import", *map(str, args)])


def mini_batch(tmp_path: Path, version: str) -> tuple[Path, dict]:
    """The shared runs of one mini-swe-agent version laid out as its swebench batch runner writes them."""
    if not (SHARED / version).is_dir():
        pytest.skip(f"no shared trajectories at {SHARED / version}")
    batch, preds = tmp_path / "batch", {}
    for path in sorted((SHARED / version).glob("*.traj.json")):
        trajectory = read_trajectory(path)
        instance = trajectory.instance_id
        (batch / instance).mkdir(parents=True)
        shutil.copyfile(path, batch / instance / f"{instance}.traj.json")
        patch = f"patch of {instance}" if trajectory.submission else ""  # the batch runner's entry for each run
        preds[instance] = {"instance_id": instance, "model_name_or_path": "m", "model_patch": patch}
    preds["only__patch-1"] = {"instance_id": "only__patch-1", "model_name_or_path": "m", "model_patch": PATCH}
    (batch / "preds.json").write_text(json.dumps(preds))
    return batch, preds


@pytest.mark.parametrize(("version", "runs", "infra"), [("mini-swe-agent-v1", 13, 0), ("mini-swe-agent-v2", 8, 1)])
def test_real_mini_swe_agent_batches_import_and_load_as_a_matrix(tmp_path, version, runs, infra):
    batch, preds = mini_batch(tmp_path, version)
    (batch / "broken").mkdir()
    (batch / "broken" / "broken.traj.json").write_text('{"messages": [')  # a run cut off mid-write
    result = invoke(batch, "--out", tmp_path / "out")
    assert result.exit_code == 1, result.output  # the broken run is named, the rest imported
    assert "broken.traj.json: truncated JSON" in result.stderr
    assert "warning: runs recorded several models" in result.stderr  # v1: two spellings; v2: chat and reasoner
    summary = json.loads(result.stdout)
    assert summary["format"] == "mini-swe-agent"
    assert summary["units"] == {"done": runs + 1 - infra, **({"infra_error": infra} if infra else {})}
    units = load_units([tmp_path / "out"]).units.set_index("instance_id")
    assert len(units) == runs + 1
    for path in (SHARED / version).glob("*.traj.json"):
        trajectory = read_trajectory(path)
        unit = units.loc[trajectory.instance_id]
        assert unit["cost"] == pytest.approx(trajectory.cost)
        assert unit["steps"] == trajectory.api_calls
        if unit["status"] == "done":  # actions were read from the copied trajectory by results' own loader
            assert unit["exit_status"] == trajectory.exit_status
            assert unit["files_read"] >= 0
        else:  # deepseek-reasoner's InternalServerError left no patch: the service failed, not the agent
            assert (trajectory.exit_status, unit["infra_error"]) == ("InternalServerError", "server_error")
    folder = tmp_path / "out" / "units" / units.loc[next(iter(preds)), "unit_id"] / "attempt-1"
    assert (folder / "patch.diff").read_text() == f"patch of {next(iter(preds))}"
    assert units.loc["only__patch-1", "status"] == "done"
    assert pd.isna(units.loc["only__patch-1", "files_read"])
    # the patch-only run keeps its predictions entry's model, and is counted and said
    assert summary["models_recorded"]["m"] >= 1
    assert "unknown" not in summary["models_recorded"]
    assert summary["patch_only"] == 1
    assert "note: 1 run(s) have a predictions entry and no trajectory" in result.stderr


@pytest.mark.parametrize("flat", [False, True], ids=["swe-agent-1.x", "swe-agent-0.x"])
def test_swe_agent_runs_map_its_file_tools_to_explore_and_edit_steps(tmp_path, flat):
    source = write_swe_agent_run(tmp_path / "run", ["o__p-1", "o__p-2"], flat=flat)
    result = invoke(source, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == "openai/gpt-4o"
    units = load_units([tmp_path / "out"]).units.set_index("instance_id")
    assert list(units["scaffold"]) == ["swe-agent"] * 2
    assert list(units["cost"]) == [0.42, 0.42]
    # open src/pkg/core.py and the editor's view of util.py are reads; `edit 1:1` comes after two explore steps
    assert list(units["files_read"]) == [2, 2]
    assert list(units["explore_before_first_edit"]) == [2, 2]
    trajectory = json.loads(next((tmp_path / "out" / "units").glob("*o__p-1*/attempt-1/trajectory.json")).read_text())
    assert [a["tool"] for a in trajectory["actions"]] == ["grep", "read", "edit", "bash", "read", "bash"]
    assert trajectory["format_errors"] == 1
    assert trajectory["exit_status"] == "submitted"
    assert next((tmp_path / "out" / "units").glob("*o__p-2*/attempt-1/patch.diff")).read_text() == PATCH


def test_swe_agent_0x_runs_take_their_model_from_the_runs_args_yaml(tmp_path):
    """0.x's .traj has no replay_config and its predictions name the run, not the model: args.yaml says it."""
    source = write_swe_agent_run(tmp_path / "runs" / "gpt4__dev__default__t-0.00", ["o__p-1", "o__p-2"], flat=True)
    for path in source.glob("*.traj"):
        document = json.loads(path.read_text())
        del document["replay_config"]
        path.write_text(json.dumps(document))
    (source / "args.yaml").write_text("environment:\n  image_name: sweagent\nagent:\n  model:\n    model_name: gpt4\n")
    result = invoke(tmp_path / "runs", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["model"], summary["models_recorded"]) == ("gpt4", {"gpt4": 2})
    trajectory = json.loads(next((tmp_path / "out" / "units").glob("*o__p-1*/attempt-1/trajectory.json")).read_text())
    assert trajectory["model"] == "gpt4"


def test_openhands_evaluation_folder_imports_as_its_output_jsonl(tmp_path):
    output = tmp_path / "eval_output" / "output.jsonl"
    output.parent.mkdir()
    output.write_text(json.dumps(openhands_row("o__p-1")) + "\n")
    from_folder = invoke(output.parent, "--out", tmp_path / "a")
    from_file = invoke(output, "--out", tmp_path / "b")
    assert (from_folder.exit_code, from_file.exit_code) == (0, 0), from_folder.output
    assert json.loads(from_folder.stdout)["units"] == json.loads(from_file.stdout)["units"] == {"done": 1}


@pytest.mark.parametrize("pairs", [False, True], ids=["event-list", "action-observation-pairs"])
def test_openhands_output_imports_each_line_and_names_a_bad_one(tmp_path, pairs):
    retried = openhands_row("o__p-2", pairs=pairs, error="RuntimeError: Runtime disconnected", patch="")
    rows = [openhands_row("o__p-2", pairs=pairs), openhands_row("o__p-1", pairs=pairs), retried]
    output = tmp_path / "output.jsonl"
    output.write_text("".join(json.dumps(row) + "\n" for row in rows) + '{"instance_id": 3}\n{not json\n')
    result = invoke(output, "--out", tmp_path / "out")
    assert result.exit_code == 1
    assert "output.jsonl:4: instance_id: missing or not text" in result.stderr
    assert "output.jsonl:5: not a JSON line" in result.stderr
    summary = json.loads(result.stdout)
    assert (summary["format"], summary["units"]) == ("openhands", {"done": 1, "infra_error": 1})
    assert summary["left_out"][f"{output}:1: replaced by a later run of the same instance"] == 1
    units = load_units([tmp_path / "out"]).units.set_index("instance_id")
    assert units.loc["o__p-2", "infra_error"] == "runtime"
    assert units.loc["o__p-1", "exit_status"] == ("Stopped" if pairs else "Finished")
    assert units.loc["o__p-1", "files_read"] == 2
    assert units.loc["o__p-1", "explore_before_first_edit"] == 3
    trajectory = json.loads(next((tmp_path / "out" / "units").glob("*o__p-1*/attempt-1/trajectory.json")).read_text())
    assert [(a["tool"], a["exit_code"]) for a in trajectory["actions"]] == [
        ("bash", 0), ("read", None), ("read", None), ("edit", None), ("bash", 1)
    ]  # fmt: skip


def test_with_a_suite_units_are_its_tasks_and_grading_uses_its_ground_truth(tmp_path):
    suite = write_suite(tmp_path / "suites", "original", ["o__p-1", "o__p-3"])
    source = write_swe_agent_run(tmp_path / "run", ["o__p-1", "o__p-2"])
    result = invoke(source, "--out", tmp_path / "out", "--suite", suite, "--condition", "hints")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["units"] == {"done": 1, "pending": 1}
    assert summary["left_out"] == {"not a task of the suites given": 1}
    config = MatrixConfig.load(tmp_path / "out" / "matrix.yaml")  # what `repoanchor grade` reads
    assert [(u.suite, u.instance_id, u.condition) for u in expand(config)] == [
        ("original", "o__p-1", "hints"), ("original", "o__p-3", "hints")
    ]  # fmt: skip
    units = load_units([tmp_path / "out"]).units.set_index("instance_id")
    assert list(units["status"]) == ["done", "pending"]
    assert units.loc["o__p-1", "decoy_visits"] == 0


def test_each_task_is_graded_by_its_own_ground_truth_wherever_its_repository_lies(tmp_path):
    """Two tasks on one repository folder (`repos/calc`, not `repos/<task>`): each is graded against its own
    `ground_truth/<task>.json`, the file the suite format names (the grader once derived the file from the
    repository's path, `repos/ground_truth/calc.json`, found nothing and left both ungraded)."""
    suite = tmp_path / "suite"
    repo = make_bug_repo(suite / "repos")
    rows = [
        {"instance_id": task, "problem_statement": ISSUE, "base_commit": "HEAD", "repoanchor_suite": "original",
         "repoanchor_repo": "repos/calc", "repoanchor_source_instance": task}
        for task in ("calc-1", "calc-2")
    ]  # fmt: skip
    (suite / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    write_ground_truth(suite, "calc-1", repo)
    other_bug = ["test_calc.py::test_subtract"]  # a test of another bug: its test patch is not calc-1's
    write_ground_truth(suite, "calc-2", repo, FAIL_TO_PASS=other_bug)
    source = write_swe_agent_run(tmp_path / "run", ["calc-1", "calc-2"], patch=grading_row(repo, "x")["patch"])
    assert invoke(source, "--out", tmp_path / "out", "--suite", suite).exit_code == 0
    grades = {
        g["instance_id"]: g for g in grade_matrix(MatrixConfig.load(tmp_path / "out" / "matrix.yaml"), provider="local")
    }
    assert {task: (g["graded"], g["resolved"]) for task, g in grades.items()} == {
        "calc-1": (True, True), "calc-2": (True, False)
    }  # fmt: skip
    assert grades["calc-1"]["f2p"] == {"success": FAIL_TO_PASS, "failure": []}
    assert grades["calc-2"]["f2p"] == {"success": [], "failure": other_bug}


def test_without_a_suite_grading_says_ungraded_instead_of_failing(tmp_path):
    source = write_swe_agent_run(tmp_path / "run", ["o__p-1"])
    assert invoke(source, "--out", tmp_path / "out").exit_code == 0
    (grade,) = grade_matrix(MatrixConfig.load(tmp_path / "out" / "matrix.yaml"))
    assert (grade["graded"], grade["reason"]) == (False, "not graded: no ground truth for the task")


@pytest.mark.parametrize(
    ("make", "args", "message"),
    [
        (lambda p: p / "missing", [], "no such file or folder"),
        (lambda p: (p / "empty").mkdir() or p / "empty", [], "no runs of a known harness"),
        (lambda p: write_swe_agent_run(p / "run", ["a"]), ["--format", "nope"], "--format 'nope'"),
        (lambda p: write_swe_agent_run(p / "run", ["a"]), ["--suite", "nowhere"], "not a suite folder"),
        (lambda p: write_swe_agent_run(p / "run", ["a"]), ["--format", "openhands"], "holds no openhands run"),
    ],
    ids=["missing", "unknown-harness", "unknown-format", "bad-suite", "format-mismatch"],
)
def test_unusable_sources_exit_2_naming_what_is_wrong(tmp_path, make, args, message):
    result = invoke(make(tmp_path), "--out", tmp_path / "out", *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr


def test_a_folder_that_already_holds_a_matrix_is_refused(tmp_path):
    source = write_swe_agent_run(tmp_path / "run", ["a"])
    assert invoke(source, "--out", tmp_path / "out").exit_code == 0
    again = invoke(source, "--out", tmp_path / "out")
    assert again.exit_code == 2
    assert "already holds a matrix" in again.stderr


def test_shared_runs_with_their_grades_give_the_resolve_rate_in_results(tmp_path):
    batch, _ = mini_batch(tmp_path, "mini-swe-agent-v1")
    grades = SHARED / "mini-swe-agent-v1" / "resolved.json"
    result = invoke(batch, "--out", tmp_path / "out", "--grades", grades)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["units"]["graded"] == 13
    units = load_units([tmp_path / "out"]).units.set_index("instance_id")
    expected = json.loads(grades.read_text())
    assert units.loc[list(expected), "resolved"].tolist() == list(expected.values())
    assert units["graded_in"].dropna().unique().tolist() == ["imported"]
    assert pd.isna(units.loc["only__patch-1", "resolved"])  # not in the grades: a finished run not graded yet


def test_the_official_harness_report_grades_imported_runs(tmp_path):
    source = write_swe_agent_run(tmp_path / "run", ["o__p-1", "o__p-2", "o__p-3"])
    report = {"resolved_ids": ["o__p-1"], "unresolved_ids": ["o__p-2"], "empty_patch_ids": [], "error_ids": ["o__p-3"]}
    (tmp_path / "report.json").write_text(json.dumps(report))
    result = invoke(source, "--out", tmp_path / "out", "--grades", tmp_path / "report.json")
    assert result.exit_code == 0, result.output
    units = load_units([tmp_path / "out"]).units.set_index("instance_id")
    assert units["resolved"].tolist() == [True, False, None]  # the harness's error is no grade
    (grade,) = [g for g in grade_matrix(MatrixConfig.load(tmp_path / "out" / "matrix.yaml")) if g["graded"]][:1]
    assert grade["provider"] == "imported"  # `repoanchor grade` keeps a grade made elsewhere


@pytest.mark.parametrize(
    ("grades", "message"),
    [({"a": "yes"}, "a: expected true/false"), ({"resolved_ids": "a"}, "resolved_ids: expected a list")],
)
def test_unusable_grades_exit_2_and_write_nothing(tmp_path, grades, message):
    source = write_swe_agent_run(tmp_path / "run", ["a"])
    (tmp_path / "grades.json").write_text(json.dumps(grades))
    result = invoke(source, "--out", tmp_path / "out", "--grades", tmp_path / "grades.json")
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (tmp_path / "out").exists()
