"""Stage 1 under the RepoMirage rule (`stage1_tests="forbidden"`): explore, but run no repair tests.

A test run cannot be reverted like an edit, so it is found afterwards in the stage's normalised trajectory
(every executed action the step classifier labels `test`, the STEPS.md rubric) and recorded as a violation
with its command; the stage-1 prompt states the rule beforehand. A trajectory that cannot be read is
recorded as unchecked rather than passed as clean.
"""

from __future__ import annotations

from pathlib import Path

from repoanchor.scaffolds.records import RunRecord
from repoanchor.scaffolds.steps.sequence import action_text, labels_in_order
from repoanchor.scaffolds.trajectories.trajectory import TrajectoryError, load

COMMAND_CHARS = 500


def find_test_runs(record: RunRecord, folder: Path) -> list[dict]:
    """One violation per test run in the stage run written to `folder` ({change, step_index, command})."""
    if not record.trajectory:
        return [{"change": "tests-unchecked", "reason": "the run wrote no trajectory"}] if record.steps else []
    try:
        trajectory = load(folder / record.trajectory)
    except TrajectoryError as error:
        return [{"change": "tests-unchecked", "reason": str(error)}]
    runs = []
    for action, label in zip(
        trajectory.actions, labels_in_order(trajectory.actions, trajectory.instance_id), strict=True
    ):
        if label.category == "test":
            runs.append(
                {"change": "test-run", "step_index": action.index, "command": action_text(action)[:COMMAND_CHARS]}
            )
    return runs
