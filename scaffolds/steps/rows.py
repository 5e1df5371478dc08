"""Steps of trajectories as tidy rows: one per executed action, labelled by the STEPS.md rubric.

Pure functions over files: `step_rows` reads each trajectory with `readers.read_many` (a bad
file is reported, the others still yield rows) and labels its actions in order (`steps.sequence`).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from repoanchor.scaffolds.steps.sequence import action_text, labels_in_order
from repoanchor.scaffolds.trajectories.readers import read_many
from repoanchor.scaffolds.trajectories.trajectory import TrajectoryError

COLUMNS = ("file", "step_index", "tool", "command", "category", "phase", "decided_by", "rule")


class StepRows(NamedTuple):
    rows: list[dict]
    errors: list[TrajectoryError]
    notes: list[str] = []
    """What a reader left out of a readable file (`Trajectory.notes`), each after the file's path."""


def step_rows(paths: list[str | Path]) -> StepRows:
    batch = read_many(paths)
    rows = []
    for trajectory in batch.trajectories:
        for action, label in zip(
            trajectory.actions, labels_in_order(trajectory.actions, trajectory.instance_id), strict=True
        ):
            text = action_text(action)
            rows.append(
                {
                    "file": trajectory.source_path,
                    "step_index": action.index,
                    "tool": action.tool,
                    "command": text,
                    "category": label.category,
                    "phase": label.phase,
                    "decided_by": label.decided_by,
                    "rule": label.rule,
                }
            )
    notes = [f"{trajectory.source_path}: {note}" for trajectory in batch.trajectories for note in trajectory.notes]
    return StepRows(rows, list(batch.errors), notes)
