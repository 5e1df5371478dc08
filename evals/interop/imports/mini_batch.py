"""A mini-swe-agent `swebench` batch folder: `preds.json` plus `<instance_id>/<instance_id>.traj.json` each.

Both 1.x (text actions) and 2.x (tool calls) trajectories are read by our own reader. A trajectory without
a predictions entry keeps its own submission; a predictions entry without a trajectory is imported as a
patch alone (nothing to analyse, still gradeable). Flat folders of `*.traj.json` are read the same way.
"""

from __future__ import annotations

from pathlib import Path

from repoanchor.evals.interop.imports.runs import Batch, ImportedRun, infra_kind, read_predictions
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from repoanchor.scaffolds.trajectories.trajectory import TrajectoryError

SCAFFOLD = "mini-swe-agent"


def looks_like(source: Path) -> bool:
    return source.is_dir() and any(source.rglob("*.traj.json"))


def read_mini_batch(folder: Path) -> Batch:
    batch = Batch(scaffold=SCAFFOLD)
    preds = folder / "preds.json"
    predictions = read_predictions(preds, batch.problems) if preds.is_file() else {}
    seen = set()
    for path in sorted(folder.rglob("*.traj.json")):
        try:
            trajectory = read_trajectory(path)
        except TrajectoryError as error:
            batch.problems.append(f"{error}; left out")
            continue
        instance = trajectory.instance_id or path.name.removesuffix(".traj.json")
        if instance in seen:
            batch.problems.append(f"{path}: instance_id: {instance!r} has another trajectory already; left out")
            continue
        seen.add(instance)
        prediction = predictions.get(instance)
        patch = prediction.patch if prediction else trajectory.submission or ""
        model = trajectory.model or (prediction.model if prediction else None)
        batch.runs.append(
            ImportedRun(
                instance_id=instance, source=str(path), model=model, patch=patch,
                exit_status=trajectory.exit_status, infra_error=infra_kind(trajectory.exit_status, patch),
                cost=trajectory.cost, trajectory=trajectory, raw_files=[str(path)],
            )
        )  # fmt: skip
    for instance, prediction in sorted(predictions.items()):
        if instance not in seen:
            batch.runs.append(
                ImportedRun(instance_id=instance, source=str(preds), patch=prediction.patch, model=prediction.model)
            )
    return batch
