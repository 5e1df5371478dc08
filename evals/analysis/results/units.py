"""One row per unit of one or more run matrices, joined from the files they and their suites leave.

A matrix is named by its YAML file or by its `out` folder (which holds `matrix.json`, the config as run).
Each unit's row joins: its `result.json` (status, infrastructure error, steps, cost, tokens), its
`grade.json` (resolved, where it was graded), its suite's `tasks.jsonl` row and `manifest.json` (suite
kind, source instance, variant, Extend family, transforms, dataset), its ground truth's role map (decoy and
proxy paths, read here for the analysis only) and its final attempt's trajectories (files read, exploration
before the first edit, role visits). A unit with no result yet, or a done unit not yet graded, is a row
with `status` pending / `graded` False: counted in the tables' notes, never scored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from repoanchor.evals.analysis.drift import roles_from_metadata, touches
from repoanchor.evals.analysis.steps_frame import load_steps
from repoanchor.evals.harness.suite_format import MANIFEST_FILE, ground_truth_file, read_suite_tasks
from repoanchor.evals.runs.matrix import AD_HOC_SUITE, MatrixConfig, MatrixConfigError, Unit, expand
from repoanchor.evals.runs.run_matrix import GRADE, MATRIX_FILE, RESULT, UNITS, read_result


class Loaded(NamedTuple):
    units: pd.DataFrame
    """One row per unit (columns: see `_row` and `_trajectory_measures`)."""
    problems: list[str]
    """Files that could not be read (trajectories, grades, manifests), each naming the file."""


def load_config(path: Path) -> MatrixConfig:
    """A matrix from its YAML file, or from the `matrix.json` an `out` folder holds."""
    path = Path(path)
    if path.is_dir():
        record = path / MATRIX_FILE
        if not record.is_file():
            raise MatrixConfigError(
                f"{path}: no {MATRIX_FILE}: pass the matrix's YAML file, or rerun `repoanchor eval`"
            )
        try:
            return MatrixConfig.model_validate_json(record.read_text(encoding="utf-8"))
        except ValueError as error:
            raise MatrixConfigError(f"{record}: not a matrix record: {error}") from None
    return MatrixConfig.load(path)


def load_units(paths: list[Path]) -> Loaded:
    """Every unit of every matrix named by `paths`, in each matrix's unit order."""
    rows, folders, problems = [], {}, []
    for path in paths:
        config = load_config(path)
        suites = _suite_rows(config, problems)
        root = Path(config.out) / UNITS
        for unit in expand(config):
            result = read_result(root / unit.unit_id / RESULT)
            grade = _read_json(root / unit.unit_id / GRADE, problems) if result else None
            task_row, manifest, roles = suites.get((unit.suite, unit.instance_id), ({}, {}, None))
            rows.append(_row(config, unit, result, grade, task_row, manifest, roles))
            if result and result.get("status") == "done":
                folders[str(root / unit.unit_id / result["attempts"][-1]["dir"])] = rows[-1]["unit_key"]
    units = pd.DataFrame(rows)
    if units.empty:
        raise MatrixConfigError(f"no units in {', '.join(map(str, paths))}")
    if units["unit_key"].duplicated().any():
        repeated = units.loc[units["unit_key"].duplicated(), "unit_key"].tolist()[:5]
        raise MatrixConfigError(f"the same unit is in two of the matrices given: {repeated}")
    # The unit key as the steps' condition: a unit's trajectories (both anchor stages) are measured together.
    frame = load_steps(list(folders), folders)
    problems += [str(error) for error in frame.errors]
    return Loaded(_trajectory_measures(units, frame.steps), problems)


def _suite_rows(config: MatrixConfig, problems: list[str]) -> dict[tuple[str, str], tuple[dict, dict, dict | None]]:
    """(suite label, task id) -> (its tasks.jsonl row, the suite's manifest, its role map)."""
    found = {}
    for suite in config.suites:
        manifest = _read_json(suite / MANIFEST_FILE, problems) or {}
        for row in read_suite_tasks(suite):
            truth = _read_json(ground_truth_file(suite, row.instance_id), problems) or {}
            roles = roles_from_metadata(truth["metadata"]) if isinstance(truth.get("metadata"), dict) else None
            found[(suite.name, row.instance_id)] = (row.model_dump(), manifest, roles)
    return found


def _row(config, unit: Unit, result: dict | None, grade: dict | None, task: dict, manifest: dict, roles) -> dict:
    summary = (result or {}).get("summary") or {}
    condition = next(c for c in config.conditions if c.name == unit.condition)
    status = (result or {}).get("status", "pending")
    graded = bool(grade and grade.get("graded"))
    return {
        "unit_key": f"{Path(config.out).resolve()}::{unit.unit_id}",
        "unit_id": unit.unit_id,
        "matrix": Path(config.out).name,
        "suite": unit.suite,
        "suite_kind": task.get("repoanchor_suite") or AD_HOC_SUITE,
        "dataset": _dataset_name(manifest) or unit.suite,
        "transforms": ",".join((manifest.get("config") or {}).get("transforms") or []),
        "instance_id": unit.instance_id,
        "source_instance": task.get("repoanchor_source_instance") or unit.instance_id,
        "variant": task.get("repoanchor_variant") or unit.instance_id,
        "family": task.get("repoanchor_family"),
        "scaffold": unit.scaffold,
        "model": unit.model,
        "condition": unit.condition,
        "anchor": condition.anchor,
        "hints": "file" if condition.hints_file else condition.hints,
        "budget": condition.budget if condition.anchor else "plain",
        "repeat": unit.repeat,
        "status": status,
        "infra_error": (result or {}).get("infra_error"),
        "exit_status": (result or {}).get("exit_status"),
        "graded": graded,
        "resolved": bool(grade.get("resolved")) if graded else None,
        "graded_in": (grade or {}).get("provider"),
        "steps": summary.get("steps"),
        "cost": (result or {}).get("cost"),
        "input_tokens": summary.get("input_tokens"),
        "output_tokens": summary.get("output_tokens"),
        "roles": roles,
    }


def _trajectory_measures(units: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """files_read, explore_before_first_edit and decoy/proxy visits per unit, from its own trajectories."""
    measures = {}
    for unit_key, own in steps.groupby("condition", sort=False):
        ordered = own.sort_values(["run", "step_index"], kind="stable").reset_index(drop=True)
        edits = ordered.index[ordered["phase"] == "edit"]
        before = ordered.iloc[: edits[0]] if len(edits) else None
        measures[unit_key] = {
            "files_read": len({path for paths in ordered["files_read"] for path in paths}),
            "explore_before_first_edit": None if before is None else int((before["phase"] == "explore").sum()),
            "ordered": ordered,
        }
    table = units.copy()
    found = table["unit_key"].map(lambda key: measures.get(key))
    table["files_read"] = found.map(lambda m: m["files_read"] if m else None).astype("Float64")
    table["explore_before_first_edit"] = found.map(lambda m: m["explore_before_first_edit"] if m else None)
    table["explore_before_first_edit"] = table["explore_before_first_edit"].astype("Float64")
    for role in ("decoy", "proxy"):
        table[f"{role}_visits"] = [
            _visits(m, roles, role) for m, roles in zip(found, table["roles"], strict=True)
        ]  # fmt: skip
        table[f"{role}_visits"] = table[f"{role}_visits"].astype("Float64")
    return table.drop(columns=["roles"])


def _visits(measure: dict | None, roles: dict | None, role: str) -> float | None:
    """Steps touching a path of `role`; None without a trajectory or without a role map (unknown, not 0)."""
    if measure is None or roles is None:
        return None
    listed = [path for path, given in roles.items() if given == role]
    ordered = measure["ordered"]
    steps = zip(ordered["files_read"], ordered["files_edited"], strict=True)
    return float(sum(touches((*read, *edited), listed) for read, edited in steps))


def _dataset_name(manifest: dict) -> str | None:
    """The dataset file's name: `{"name": ...}` in built suites' manifests, a path in the original suite's."""
    dataset = manifest.get("dataset")
    if isinstance(dataset, dict):
        return dataset.get("name")
    return Path(dataset).name if isinstance(dataset, str) and dataset else None


def _read_json(path: Path, problems: list[str]) -> dict | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        problems.append(f"{path}: unreadable ({error}); left out")
        return None
    return data if isinstance(data, dict) else None
