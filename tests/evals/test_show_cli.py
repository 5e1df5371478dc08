"""`repoanchor show` prints a run readably, and `steps` reads our own trajectory.json (as `analyze` does)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from repoanchor.scaffolds.trajectories.trajectory import Action, ModelTurn, Trajectory, save

COMMANDS = [
    ("grep -rn total calc/", "calc/core.py:3:def total(xs):", 0),
    ("sed -i 's/- 1/+ 0/' calc/core.py", "", 0),
    ("python -m pytest -q", "1 failed\n" + "\n".join(f"line {n}" for n in range(9)), 1),
]


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    """A plain run's folder as `repoanchor run` leaves it: trajectory.json beside the scaffold's files."""
    actions = [
        Action(index=i, tool="bash", command=c, tool_input={"command": c}, output_excerpt=o, exit_code=e, turn_index=i)
        for i, (c, o, e) in enumerate(COMMANDS)
    ]
    turns = [ModelTurn(index=i, cost=0.01, n_actions=1) for i in range(len(actions))]
    trajectory = Trajectory(
        source_format="mini-swe-agent-v2", model="openai/gpt-4o", exit_status="Submitted", cost=0.03,
        input_tokens=300, output_tokens=60, turns=turns, actions=actions,
    )  # fmt: skip
    save(trajectory, tmp_path / "run" / "trajectory.json")
    return tmp_path / "run"


def test_show_prints_each_step_with_phase_command_and_output(run_folder: Path):
    result = CliRunner().invoke(app, ["show", str(run_folder), "--output-lines", "2"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"== {run_folder / 'trajectory.json'}"
    assert lines[1] == "model openai/gpt-4o · ended Submitted · 3 steps · cost $0.0300 · tokens 300 in / 60 out"
    assert lines[2].split() == ["#0", "explore", "search", "bash:", "grep", "-rn", "total", "calc/"]
    assert lines[3:5] == ["     ↳ exit 0", "       calc/core.py:3:def total(xs):"]
    assert lines[5].split()[:3] == ["#1", "edit", "edit"]
    assert lines[6] == "     ↳ exit 0 (no output)"
    assert lines[7].split()[:3] == ["#2", "test", "test"]
    assert lines[8:12] == ["     ↳ exit 1", "       1 failed", "       line 0", "       … 8 more lines"]


@pytest.mark.parametrize("target", ["folder", "file"])
def test_steps_reads_our_own_trajectory_json(run_folder: Path, target: str):
    path = run_folder if target == "folder" else run_folder / "trajectory.json"
    result = CliRunner().invoke(app, ["steps", str(path), "--jsonl"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["step_index"], r["phase"]) for r in rows] == [(0, "explore"), (1, "edit"), (2, "test")]
    assert {r["file"] for r in rows} == {str(run_folder / "trajectory.json")}


def test_show_on_a_folder_without_a_trajectory_is_one_line(tmp_path: Path):
    result = CliRunner().invoke(app, ["show", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: Invalid value for RUN: {tmp_path}: folder holds no trajectory file "
        "(*.traj.json, *.events.jsonl, *.export.json, trajectory.json)"
    ]


def test_steps_help_names_the_phases_and_links_the_shipped_rubric():
    result = CliRunner().invoke(app, ["steps", "--help"])
    shown = " ".join(result.stdout.replace("│", " ").split())  # the help as read, its box and wrapping removed
    assert "a phase (explore, edit, test, or other)" in shown
    assert "is docs/STEPS.md in the repository" in shown
    assert "repoanchor steps runs/matrix/units --jsonl" in shown
    assert (Path(__file__).parents[2] / "docs" / "STEPS.md").read_text().startswith("# Step classification rubric")


def test_show_on_a_file_that_is_not_a_trajectory_is_bad_input(tmp_path: Path):
    bad = tmp_path / "run.events.jsonl"
    bad.write_text("not json at all\n")
    result = CliRunner().invoke(app, ["show", str(bad)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: Invalid value for RUN: {bad}: not valid JSON at line 1 column 1: Expecting value"
    ]


def test_a_step_without_exit_code_says_so_and_a_trailing_newline_is_no_second_line(tmp_path: Path):
    """SWE-agent and OpenHands record no exit code for some actions; SWE-agent's end in a newline."""
    action = Action(index=0, tool="bash", command="open calc/core.py 29\n", output_excerpt="[File: a.py]", turn_index=0)
    trajectory = Trajectory(source_format="swe-agent", turns=[ModelTurn(index=0, n_actions=1)], actions=[action])
    save(trajectory, tmp_path / "trajectory.json")
    result = CliRunner().invoke(app, ["show", str(tmp_path / "trajectory.json"), "--output-lines", "0"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[2:] == [
        "#0   other   other   bash: open calc/core.py 29",
        "     ↳ exit code not recorded",
        "       … 1 more lines",
        "",
    ]


def test_show_and_steps_name_the_lines_a_reader_left_out(tmp_path: Path):
    """An OpenCode stream with a warning OpenCode printed to stdout before its events: read, and said."""
    stream = tmp_path / "opencode.events.jsonl"
    fixture = Path(__file__).parents[1] / "scaffolds" / "fixtures" / "opencode-run-events.jsonl"
    stream.write_text("Warning: permission rejected\n" + fixture.read_text())
    shown = CliRunner().invoke(app, ["show", str(stream)])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[2] == "note: line 1 is not a JSON event, left out: Warning: permission rejected"
    labelled = CliRunner().invoke(app, ["steps", str(stream), "--jsonl"])
    assert labelled.exit_code == 0, labelled.output
    note = f"note: {stream}: line 1 is not a JSON event, left out: Warning: permission rejected"
    assert labelled.stderr.splitlines() == [note]
    assert len(labelled.stdout.splitlines()) == len(read_trajectory(fixture).actions) == 5
