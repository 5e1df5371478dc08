"""One attempt of a matrix unit, as every executor runs it (a pool worker, a Ray task)."""

from __future__ import annotations

import traceback
from pathlib import Path

from repoanchor.evals.runs.matrix import Unit


def run_attempt(unit: Unit, folder: str) -> dict:
    """Run one attempt of `unit` into `folder`; never raises for the run's own failures."""
    from repoanchor.evals.runs.run_one import run_task

    try:
        return {"summary": run_task(unit.task, unit.options, Path(folder))}
    except Exception:  # a bug in a scaffold or template: recorded with its traceback, the batch goes on
        return {"error": traceback.format_exc()}
