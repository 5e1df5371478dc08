"""Imported runs written in a run matrix's own layout, so `repoanchor grade` and `results` read them as is.

    OUT/matrix.json, OUT/matrix.yaml   the matrix the runs form (one scaffold, model, condition and repeat)
    OUT/units/<unit_id>/result.json    status, exit status, cost, steps, tokens (as `repoanchor eval` writes)
    OUT/units/<unit_id>/attempt-1/     trajectory.json (normalised), patch.diff, the harness's own files
    OUT/imported/                      without --suite: a suite of the imported ids (no repositories, no
                                       ground truth: results read it, grades say ungraded)
    OUT/units/<unit_id>/grade.json     with --grades: the grade made elsewhere (grades.py)
    OUT/import.json                    what was imported, what was left out and why

With `--suite`, units are that suite's tasks: a run whose instance is not in it is left out (counted), a task
with no run stays pending, and grading uses the suite's ground truth like any matrix's.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from repoanchor.evals.harness.datasets import safe_name
from repoanchor.evals.harness.suite_format import MANIFEST_FILE, TASKS_FILE, read_suite_tasks
from repoanchor.evals.interop.imports.grades import grade_record, read_grades
from repoanchor.evals.interop.imports.runs import Batch, ImportedRun, SourceError
from repoanchor.evals.runs.matrix import MatrixConfig, expand
from repoanchor.evals.runs.run_matrix import GRADE, MATRIX_FILE, RESULT, UNITS
from repoanchor.perturb.atomic import write_atomic
from repoanchor.scaffolds.trajectories.trajectory import save

STUB_SUITE = "imported"
ATTEMPT = "attempt-1"


def write_layout(
    batch: Batch, out: Path, *, suites: list[Path], model: str | None, condition: str, grades: Path | None = None
) -> dict:
    """Write `batch` under `out` (which must hold no matrix yet), with `grades` (grades.py) for the finished
    runs it names; returns the import summary."""
    out = Path(out).resolve()
    if (out / MATRIX_FILE).exists():
        raise SourceError(f"{out}: already holds a matrix ({MATRIX_FILE}); import into a new folder")
    label = model or _common_model(batch.runs)
    resolved = read_grades(grades) if grades else {}
    known = {row.instance_id for suite in suites for row in read_suite_tasks(suite)} if suites else None
    left_out = Counter({"unreadable (see problems)": len(batch.problems)} if batch.problems else {})
    runs = {}
    for run in batch.runs:
        if known is not None and run.instance_id not in known:
            left_out["not a task of the suites given"] += 1
        elif run.instance_id in runs:  # OpenHands appends a retried instance's line again: the last one counts
            left_out[f"{runs[run.instance_id].source}: replaced by a later run of the same instance"] += 1
            runs[run.instance_id] = run
        else:
            runs[run.instance_id] = run
    suites = [Path(s).resolve() for s in suites] or [_stub_suite(out, list(runs))]
    config = MatrixConfig.model_validate(
        {"suites": [str(s) for s in suites], "scaffolds": [batch.scaffold], "models": [{"name": label}],
         "conditions": [{"name": condition}], "repeats": 1, "out": str(out)}
    )  # fmt: skip
    statuses = Counter()
    for unit in expand(config):
        run = runs.get(unit.instance_id)
        if run is None:
            statuses["pending"] += 1
            continue
        status = _write_unit(out / UNITS / unit.unit_id, unit, run)
        statuses[status] += 1
        if status == "done" and unit.instance_id in resolved:
            record = grade_record(unit, resolved[unit.instance_id], grades)
            write_atomic(out / UNITS / unit.unit_id / GRADE, json.dumps(record, indent=1))
            statuses["graded"] += 1
    text = config.model_dump_json(indent=1)
    write_atomic(out / MATRIX_FILE, text)
    write_atomic(out / "matrix.yaml", text)  # JSON is YAML: `repoanchor grade OUT/matrix.yaml` takes it as is
    summary = {
        "out": str(out), "scaffold": batch.scaffold, "model": label,
        "models_recorded": dict(Counter(run.model or "unknown" for run in runs.values())),
        "condition": condition, "suites": [str(s) for s in suites], "units": dict(statuses),
        "patch_only": sum(run.trajectory is None for run in runs.values()),
        "left_out": dict(sorted(left_out.items())), "problems": batch.problems,
    }  # fmt: skip
    write_atomic(out / "import.json", json.dumps(summary, indent=1))
    return summary


def _common_model(runs: list[ImportedRun]) -> str:
    """The batch's model: the one most runs recorded (a batch is one model; a stray spelling is noted)."""
    named = Counter(run.model for run in runs if run.model)
    return named.most_common(1)[0][0] if named else "unknown"


def _stub_suite(out: Path, instance_ids: list[str]) -> Path:
    """A suite naming the imported tasks: enough for results; no repository or ground truth to grade with."""
    suite = out / STUB_SUITE
    suite.mkdir(parents=True, exist_ok=True)
    rows = [
        {"instance_id": task, "problem_statement": "", "base_commit": "", "repoanchor_suite": "original",
         "repoanchor_repo": f"repos/{safe_name(task)}", "repoanchor_source_instance": task}
        for task in instance_ids
    ]  # fmt: skip
    write_atomic(suite / TASKS_FILE, "".join(json.dumps(row) + "\n" for row in rows))
    note = "tasks of imported runs: no repositories or ground truth; import with --suite to grade"
    manifest = {"kind": "imported", "dataset": {"name": STUB_SUITE}, "note": note}
    write_atomic(suite / MANIFEST_FILE, json.dumps(manifest, indent=1))
    return suite


def _write_unit(folder: Path, unit, run: ImportedRun) -> str:
    attempt = folder / ATTEMPT
    attempt.mkdir(parents=True, exist_ok=True)
    (attempt / "patch.diff").write_text(run.patch, encoding="utf-8")
    for raw in run.raw_files:  # beside trajectory.json, so the analysis reads the run once
        shutil.copyfile(raw, attempt / Path(raw).name)
    trajectory = run.trajectory
    if trajectory is not None:
        save(trajectory, attempt / "trajectory.json")
    status = "infra_error" if run.infra_error else "done"
    summary = {
        "instance_id": run.instance_id, "scaffold": unit.scaffold, "model": run.model, "imported_from": run.source,
        "exit_status": run.exit_status, "infra_error": run.infra_error,
        "steps": None if trajectory is None else trajectory.api_calls, "cost": run.cost,
        "input_tokens": None if trajectory is None else trajectory.input_tokens,
        "output_tokens": None if trajectory is None else trajectory.output_tokens,
        "patch_lines": len(run.patch.splitlines()),
    }  # fmt: skip
    attempt_record = {"attempt": 1, "dir": ATTEMPT, "cost": run.cost, "infra_error": run.infra_error}
    record = {
        "unit_id": unit.unit_id, "suite": unit.suite, "instance_id": unit.instance_id, "scaffold": unit.scaffold,
        "model": unit.model, "condition": unit.condition, "repeat": unit.repeat, "status": status,
        "exit_status": run.exit_status if status == "done" else None, "infra_error": run.infra_error,
        "cost": run.cost, "attempts": [attempt_record], "summary": summary, "error": None,
        "imported_from": run.source, "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }  # fmt: skip
    write_atomic(folder / RESULT, json.dumps(record, indent=1))
    (attempt / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return status
