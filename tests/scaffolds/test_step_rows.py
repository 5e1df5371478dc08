"""`repoanchor steps`: one labelled row per executed action over real trajectories; a bad file is
named and the batch continues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from tests.support.shared import shared_path

DATA = shared_path("data", "trajectories")
TRAJECTORIES = sorted(DATA.glob("*/*.traj.json")) if DATA.is_dir() else []
runner = CliRunner()


@pytest.mark.skipif(not TRAJECTORIES, reason=f"shared trajectories not found at {DATA}")
def test_steps_jsonl_has_one_labelled_row_per_action_and_names_bad_files(tmp_path: Path):
    bad = tmp_path / "broken.traj.json"
    bad.write_text('{"messages": [')
    picked = TRAJECTORIES[:3]
    result = runner.invoke(app, ["steps", *map(str, picked), str(bad), "--jsonl"])
    assert result.exit_code == 1
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == sum(len(read_trajectory(p).actions) for p in picked)
    assert {tuple(sorted(r)) for r in rows} == {
        ("category", "command", "decided_by", "file", "phase", "rule", "step_index", "tool")
    }
    assert {r["category"] for r in rows} <= {"search", "read", "edit", "test", "other"}
    assert {r["phase"] for r in rows} <= {"explore", "edit", "test", "other"}
    assert "broken.traj.json" in result.stderr
