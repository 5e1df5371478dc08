"""Which run a trajectory file belongs to: its matrix unit or two-stage run folder, read from the records beside it.

A RepoAnchor run writes two trajectories (stage 1 and stage 2) under one folder holding `anchored.json`; a
matrix unit keeps its attempts under `units/<unit>/attempt-N/` with `result.json` naming the final one. The
*unit* is what statistics resample: a unit's trajectories are not independent of each other. A matrix unit
also says the trajectory's suite, scaffold, model and condition (the label runs are grouped by) and its task,
whose source instance the suite's row gives (what a perturbed run pairs with its original on), and a trajectory of
an attempt that was retried after an infrastructure failure is *superseded*: it is not the unit's run.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import NamedTuple

from repoanchor.evals.harness.suite_format import TASKS_FILE
from repoanchor.evals.runs.run_matrix import MATRIX_FILE, RESULT, read_result

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
    return RunContext(str(folder), unit_label(record), source_instance(folder, record), superseded)


def unit_label(record: dict) -> str | None:
    """suite/scaffold/model/condition: a condition name alone would pool suites, scaffolds and models, whose
    runs differ for reasons other than the condition (the parts a record lacks are left out)."""
    if not record.get("condition"):
        return None
    parts = [record.get(key) for key in ("suite", "scaffold", "model", "condition")]
    return "/".join(str(part) for part in parts if part)


def source_instance(unit_folder: Path, record: dict) -> str | None:
    """The dataset instance a unit's task came from: a Perturb or SPT task has an id of its own, and pairing
    a perturbed run with its original run needs the instance both were made from (the suites' rows say)."""
    task = record.get("instance_id")
    sources = suite_sources(str(unit_folder.parent.parent))
    return sources.get((record.get("suite"), task), task)


@functools.cache
def suite_sources(matrix_out: str) -> dict[tuple[str, str], str]:
    """(suite label, task id) -> source instance, from the suites the matrix's matrix.json names."""
    try:
        suites = json.loads((Path(matrix_out) / MATRIX_FILE).read_text(encoding="utf-8")).get("suites") or []
    except (OSError, ValueError, AttributeError):
        return {}  # a matrix from before matrix.json, or a bare units folder: task ids pair as they are
    sources = {}
    for suite in map(Path, suites):
        try:
            rows = [json.loads(line) for line in (suite / TASKS_FILE).read_text(encoding="utf-8").splitlines() if line]
        except (OSError, ValueError):
            continue  # a moved or broken suite: its units keep their task ids (and `results` says what is wrong)
        for row in rows:
            sources[(suite.name, row["instance_id"])] = row.get("repoanchor_source_instance") or row["instance_id"]
    return sources
