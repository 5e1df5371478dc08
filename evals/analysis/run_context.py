"""Which run a trajectory file belongs to: its matrix unit or two-stage run folder, read from the records beside it.

A RepoAnchor run writes two trajectories (stage 1 and stage 2) under one folder holding `anchored.json`; a
matrix unit keeps its attempts under `units/<unit>/attempt-N/` with `result.json` naming the final one. The
*unit* is what statistics resample: a unit's trajectories are not independent of each other. A matrix unit
also says the trajectory's condition and instance (our normalised trajectories may not), and a trajectory of
an attempt that was retried after an infrastructure failure is *superseded*: it is not the unit's run.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from repoanchor.evals.runs.run_matrix import RESULT, read_result

ANCHORED = "anchored.json"
MATRIX_DEPTH = 4
"""units/<unit>/attempt-N/stage1-1/trajectory.json: result.json is at most this many folders up."""
ANCHORED_DEPTH = 2


class RunContext(NamedTuple):
    unit: str
    """The folder of the matrix unit or two-stage run: the resampling unit."""
    condition: str | None = None
    instance_id: str | None = None
    superseded: bool = False


def context_of(path: Path) -> RunContext | None:
    """The matrix unit or two-stage run holding the trajectory at `path`; None for a lone trajectory."""
    folders = list(Path(path).resolve().parents)
    for folder in folders[:MATRIX_DEPTH]:
        record = read_result(folder / RESULT) if (folder / RESULT).is_file() else None
        if record is not None and "unit_id" in record:
            return _matrix_context(path, folder, record)
    for folder in folders[:ANCHORED_DEPTH]:
        if (folder / ANCHORED).is_file():
            return RunContext(str(folder))
    return None


def _matrix_context(path: Path, folder: Path, record: dict) -> RunContext:
    attempts = record.get("attempts") or []
    final = attempts[-1].get("dir") if attempts else None
    relative = Path(path).resolve().relative_to(folder).parts
    superseded = final is not None and relative[0] != final
    return RunContext(str(folder), record.get("condition"), record.get("instance_id"), superseded)
