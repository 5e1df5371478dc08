"""One attempt of a matrix unit, as every executor runs it (a pool worker, a Ray task), and the record a unit's
attempts end in."""

from __future__ import annotations

import traceback
from datetime import datetime, timezone
from pathlib import Path

from repoanchor.evals.runs.matrix import Unit


def run_attempt(unit: Unit, folder: str, hints_text: str | None = None) -> dict:
    """Run one attempt of `unit` into `folder`; never raises for the run's own failures.
    `hints_text`: see run_task (the Ray executor carries a hints file's content, not its path)."""
    from repoanchor.evals.runs.run_one import run_task

    try:
        return {"summary": run_task(unit.task, unit.options, Path(folder), hints_text=hints_text)}
    except Exception:  # a bug in a scaffold or template: recorded with its traceback, the batch goes on
        return {"error": traceback.format_exc()}


def result_record(unit: Unit, status: str, history: list[dict], summary: dict | None, error: str | None) -> dict:
    costs = [entry["cost"] for entry in history if entry["cost"] is not None]
    return {
        "unit_id": unit.unit_id,
        "suite": unit.suite,
        "instance_id": unit.instance_id,
        "scaffold": unit.scaffold,
        "model": unit.model,
        "condition": unit.condition,
        "repeat": unit.repeat,
        "status": status,
        "exit_status": (summary or {}).get("exit_status") if status == "done" else None,
        "infra_error": history[-1]["infra_error"] if status == "infra_error" else None,
        "cost": sum(costs) if costs else None,
        "attempts": history,
        "summary": summary,
        "error": error,
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
