"""Grades made elsewhere, brought in with the runs: the official SWE-bench harness's report or a plain map.

Accepted shapes: the harness's run report (`resolved_ids`, `unresolved_ids`, `empty_patch_ids`, `error_ids`:
an errored instance was not graded), its per-instance `report.json` (`{id: {"resolved": bool, ...}}`) and a
plain `{id: bool}` map. Each becomes the unit's `grade.json` (provider `imported`), which `repoanchor grade`
keeps (and `--redo` replaces with our own grade where the suite has ground truth).
"""

from __future__ import annotations

from pathlib import Path

from repoanchor.evals.interop.imports.runs import SourceError, read_json

PROVIDER = "imported"


def read_grades(path: Path) -> dict[str, bool]:
    """instance_id -> resolved; a file of none of the shapes is a `SourceError` naming the field."""
    problems: list[str] = []
    document = read_json(Path(path), problems)
    if not isinstance(document, dict):
        raise SourceError(problems[0] if problems else f"{path}: expected a JSON object of grades")
    if "resolved_ids" in document:
        return _from_report(path, document)
    grades = {}
    for instance, value in document.items():
        resolved = value.get("resolved") if isinstance(value, dict) else value
        if not isinstance(resolved, bool):
            raise SourceError(f"{path}: {instance}: expected true/false or an object with 'resolved', not {value!r}")
        grades[instance] = resolved
    return grades


def _from_report(path: Path, report: dict) -> dict[str, bool]:
    fields = {"resolved_ids": True, "unresolved_ids": False, "empty_patch_ids": False}
    grades = {}
    for field, resolved in fields.items():
        ids = report.get(field, [])
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise SourceError(f"{path}: {field}: expected a list of instance ids")
        grades |= dict.fromkeys(ids, resolved)
    return grades


def grade_record(unit, resolved: bool, source: Path) -> dict:
    return {"unit_id": unit.unit_id, "suite": unit.suite, "instance_id": unit.instance_id, "graded": True,
            "resolved": resolved, "status": "imported", "provider": PROVIDER, "source": str(source)}  # fmt: skip
