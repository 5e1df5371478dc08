"""`analyze` on a matrix folder: runs grouped by suite/scaffold/model/condition from the records, and a perturbed
run paired with its original on the source instance its suite's row names (the task ids differ)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.scaffolds.trajectories.trajectory import Action, Trajectory, save

INSTANCES = ["x-1", "x-2", "x-3"]
COMMANDS = {
    "original": ["grep -rn f .", "sed -i 's/a/b/' m.py", "python -m pytest -q"],
    "perturb": ["grep -rn f .", "cat m.py", "cat proxy.py", "sed -i 's/a/b/' m.py", "python -m pytest -q"],
}


def task_id(suite: str, instance: str) -> str:
    return instance if suite == "original" else f"{instance}__perturb-0"


def write_matrix(root: Path) -> Path:
    """root/out: matrix.json naming two suites, one unit per (suite, instance), each with its trajectory.json."""
    out = root / "out"
    for suite, commands in COMMANDS.items():
        rows = [{"instance_id": task_id(suite, i), "repoanchor_source_instance": i} for i in INSTANCES]
        (root / suite).mkdir(parents=True)
        (root / suite / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
        for instance in INSTANCES:
            unit = out / "units" / f"{suite}__{instance}"
            record = {
                "unit_id": unit.name, "status": "done", "suite": suite, "instance_id": task_id(suite, instance),
                "scaffold": "mini-swe-agent", "model": "m", "condition": "plain",
                "attempts": [{"attempt": 1, "dir": "attempt-1", "infra_error": None}],
            }  # fmt: skip
            unit.mkdir(parents=True)
            (unit / "result.json").write_text(json.dumps(record))
            actions = [
                Action(index=n, tool="bash", command=c, tool_input={"command": c}, turn_index=n)
                for n, c in enumerate(commands)
            ]
            save(Trajectory(source_format="mini-swe-agent-v2", actions=actions), unit / "attempt-1" / "trajectory.json")
    (out / "matrix.json").write_text(json.dumps({"suites": [str(root / s) for s in COMMANDS]}))
    return out


def test_a_matrix_folder_is_grouped_by_its_records_and_paired_on_source_instances(tmp_path: Path):
    out = write_matrix(tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(out), "--out", str(tmp_path / "analysis"), "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    labels = ["original/mini-swe-agent/m/plain", "perturb/mini-swe-agent/m/plain"]
    assert summary["runs_per_condition"] == dict.fromkeys(labels, 3)
    steps = pd.read_csv(tmp_path / "analysis" / "steps.csv")
    assert set(steps["instance_id"]) == set(INSTANCES)  # the perturbed tasks' own ids are not what pairs
    deltas = pd.read_csv(tmp_path / "analysis" / "delta_p.csv")
    assert set(deltas["pairing"]) == {"paired"}
    assert set(deltas["instances"]) == {3}
    explore = deltas.set_index(["from", "to"]).loc[("explore", "explore")]
    assert explore["p_a"] == 0.0
    assert explore["p_b"] == pytest.approx(2 / 3)  # perturbed runs read twice more before editing
