"""Run a matrix: every unit not yet done, on an executor, with classified retries and a cost budget.

On disk, under the config's `out`:

    units/<unit_id>/attempt-<n>/   one run folder per attempt (run_task's files)
    units/<unit_id>/result.json    written once, atomically, after the unit's last attempt
    summary.json                   the matrix's counts, rewritten at the end of every invocation
    units/<unit_id>/grade.json     written by `repoanchor grade` (grade_runs.py)
    matrix.json                    the config as run (paths resolved), so `repoanchor results OUT` needs only OUT

A unit is done exactly when its result.json exists, so a rerun (after a crash, a kill, a budget stop)
skips finished units and starts every other one from a clean folder. Workers write into a private
staging folder that the driver renames to attempt-<n> when the attempt ends: a worker left over from a
killed driver can then never write into a folder the resumed driver uses.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import time
from collections import Counter, deque
from pathlib import Path

from pydantic import BaseModel

from repoanchor.evals.harness.failpoints import failpoint
from repoanchor.evals.runs.attempt import result_record
from repoanchor.evals.runs.executors import Executor
from repoanchor.evals.runs.fingerprint import fingerprints, refuse_stale
from repoanchor.evals.runs.matrix import MatrixConfig, Unit, expand
from repoanchor.evals.runs.matrix_display import Display
from repoanchor.perturb.atomic import write_atomic
from repoanchor.scaffolds.models.credentials import refuse_missing_credentials
from repoanchor.scaffolds.models.pricing import refuse_unpriced

RESULT = "result.json"
GRADE = "grade.json"
"""Written beside result.json by `grade_runs`; read by `analysis.results`."""
UNITS = "units"
MATRIX_FILE = "matrix.json"
WORKER_LOST = "worker_lost"


class MatrixSummary(BaseModel):
    units: int
    already_done: int
    """Units whose result file existed when this invocation started (0 with redo)."""
    ran: int
    """Units that got a result file in this invocation."""
    attempts: int
    """Attempts started in this invocation, retries included."""
    statuses: dict[str, int]
    """Over the whole matrix: done (the agent ran to an ending), infra_error, crashed, skipped_budget, pending."""
    exit_statuses: dict[str, int]
    """The agents' endings among `done` units."""
    infra_errors: dict[str, int]
    """Infrastructure error kinds of units that stayed failed after their retries."""
    retried_infra_errors: dict[str, int]
    """Kinds of every attempt in this invocation that failed for infrastructure reasons, retried or not."""
    cost: float
    unpriced_runs: int = 0
    """Done units whose cost is unknown (an unpriced model, cost limits off): left out of `cost`."""
    cost_budget: float
    budget_stopped: bool
    skipped: list[str]
    """Units not started because the budget was spent; a rerun with a larger budget runs them."""
    wall_seconds: float


def write_json_atomic(path: Path, data: object) -> None:
    """Readers see the old file or the whole new one, never a prefix, even across a kill or power loss."""
    write_atomic(path, json.dumps(data, indent=1), durable=True)


def read_result(path: Path) -> dict | None:
    """A finished unit's record; None when absent, or unreadable (then the unit simply runs again)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and "status" in record else None


def run_matrix(
    config: MatrixConfig, *, executor: Executor, redo: bool = False, progress: bool = True, retry_infra: bool = True
) -> MatrixSummary:
    """Run every unit of `config` that has no result file (all of them with `redo`) on `executor`.

    `retry_infra`: a unit whose result is an infrastructure error (a missing key, a server down) counts as
    not done, so a plain rerun tries it again; its agent never ended, so there is no result to keep."""
    started = time.monotonic()
    refuse_missing_credentials(*model_configs(config))
    units = expand(config)
    root = config.out / UNITS
    prints = fingerprints(units, config.suites)
    found = {} if redo else {u.unit_id: read_result(root / u.unit_id / RESULT) for u in units}
    results = {unit_id: record for unit_id, record in found.items() if counts_as_done(record, retry_infra)}
    refuse_stale(config.out, results, prints)
    refuse_unpriced(config.models, config.limits.cost, config.cost_budget)
    root.mkdir(parents=True, exist_ok=True)
    # Absolute paths: the record must mean the same when read from another working directory.
    write_json_atomic(config.out / MATRIX_FILE, config.relative_to(Path.cwd()).model_dump(mode="json"))
    remove_leftovers(config.out, results)
    already_done = len(results)
    driver = Driver(config, executor, root, results)
    driver.prints = prints
    todo = [unit for unit in units if unit.unit_id not in results]
    with Display(progress, len(units), results.values(), config.cost_budget) as display:
        driver.display = display
        driver.run(todo)
    summary = summarise(config, units, driver, already_done)
    summary.wall_seconds = round(time.monotonic() - started, 3)
    write_json_atomic(config.out / "summary.json", summary.model_dump())
    return summary


def model_configs(config: MatrixConfig) -> tuple[list, list[str]]:
    """Each model's run configuration and the config field it comes from, for messages."""
    return [m.config() for m in config.models], [f"models[{i}]" for i in range(len(config.models))]


def counts_as_done(record: dict | None, retry_infra: bool) -> bool:
    return record is not None and not (retry_infra and record["status"] == "infra_error")


def remove_leftovers(out: Path, results: dict[str, dict]) -> None:
    """Half-written files of a killed invocation (`.NAME.PID.tmp`), and in a done unit's folder any
    staging folder a stale worker left (`.attempt-N.SESSION`). Unfinished units are cleaned when they
    start again; nothing else in a unit folder is touched (grading writes its grade.json there)."""
    for temporary in out.glob(".*.tmp"):
        temporary.unlink(missing_ok=True)
    for unit_id in results:
        for path in (out / UNITS / unit_id).glob(".*"):
            if path.is_dir() and path.name.startswith(".attempt-"):
                shutil.rmtree(path, ignore_errors=True)
            elif path.name.endswith(".tmp"):
                path.unlink(missing_ok=True)


class Driver:
    """Keeps at most `slots` attempts in flight, so the budget is checked before every start."""

    def __init__(self, config: MatrixConfig, executor: Executor, root: Path, results: dict[str, dict]) -> None:
        self.config, self.executor, self.root, self.results = config, executor, root, results
        self.spent = sum(record.get("cost") or 0.0 for record in results.values())
        self.session = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.ran, self.attempts, self.skipped = 0, 0, []
        self.infra_attempts: Counter[str] = Counter()
        self.display: Display | None = None
        self.prints: dict[str, dict[str, str]] = {}
        """Each unit's fingerprint, recorded in its result."""
        # The config's `workers` caps a larger executor (one shared pool, or a cluster, serving several matrices).
        self.slots = min(executor.slots, config.workers or executor.slots)

    def over_budget(self) -> bool:
        return self.config.cost_budget > 0 and self.spent >= self.config.cost_budget

    def run(self, todo: list[Unit]) -> None:
        queue = deque((unit, 1, []) for unit in todo)
        inflight: dict = {}
        while queue or inflight:
            while queue and len(inflight) < self.slots:
                if self.over_budget():  # no new work; what is in flight finishes and is recorded
                    self.skipped += [unit.unit_id for unit, _, _ in queue]
                    queue.clear()
                    break
                unit, attempt, history = queue.popleft()
                inflight[self.start(unit, attempt)] = (unit, attempt, history)
            if not inflight:
                break
            for handle, outcome in self.executor.wait(list(inflight)):
                unit, attempt, history = inflight.pop(handle)
                if self.finish(unit, attempt, history, outcome):
                    queue.appendleft((unit, attempt + 1, history))  # retried next, before fresh units

    def start(self, unit: Unit, attempt: int):
        folder = self.root / unit.unit_id
        if attempt == 1:  # whatever a killed run or an earlier result left here is stale now
            shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        self.attempts += 1
        handle = self.executor.submit(unit, self._staging(unit, attempt))
        failpoint("matrix.submitted", unit.unit_id)
        return handle

    def _staging(self, unit: Unit, attempt: int) -> Path:
        return self.root / unit.unit_id / f".attempt-{attempt}.{self.session}"

    def finish(self, unit: Unit, attempt: int, history: list[dict], outcome: dict) -> bool:
        """Record one attempt's outcome; True when the unit should be tried again."""
        name = f"attempt-{attempt}"
        staging = self._staging(unit, attempt)
        if staging.exists():
            staging.replace(staging.parent / name)
        failpoint("matrix.attempt-moved", unit.unit_id)
        summary = outcome.get("summary")
        cost = (summary or {}).get("cost")
        self.spent += cost or 0.0
        kind = (summary or {}).get("infra_error") or (WORKER_LOST if "lost" in outcome else None)
        history.append({"attempt": attempt, "dir": name, "infra_error": kind, "cost": cost})
        if kind:
            self.infra_attempts[kind] += 1
            if attempt <= self.config.max_infra_retries:
                return True
        status = "crashed" if "error" in outcome else "infra_error" if kind else "done"
        record = result_record(unit, status, history, summary, outcome.get("error") or outcome.get("lost"))
        record["fingerprint"] = self.prints.get(unit.unit_id)
        write_json_atomic(self.root / unit.unit_id / RESULT, record)
        failpoint("matrix.result-written", unit.unit_id)
        self.results[unit.unit_id] = record
        self.ran += 1
        if self.display:
            self.display.add(record)
        return False


def summarise(config: MatrixConfig, units: list[Unit], driver: Driver, already_done: int) -> MatrixSummary:
    records = [driver.results[u.unit_id] for u in units if u.unit_id in driver.results]
    statuses = Counter(record["status"] for record in records)
    statuses["skipped_budget"] = len(driver.skipped)
    statuses["pending"] = len(units) - len(records) - len(driver.skipped)
    return MatrixSummary(
        units=len(units),
        already_done=already_done,
        ran=driver.ran,
        attempts=driver.attempts,
        statuses={key: statuses[key] for key in ("done", "infra_error", "crashed", "skipped_budget", "pending")},
        exit_statuses=dict(Counter(str(r["exit_status"]) for r in records if r["status"] == "done")),
        infra_errors=dict(Counter(r["infra_error"] for r in records if r["status"] == "infra_error")),
        retried_infra_errors=dict(driver.infra_attempts),
        cost=round(driver.spent, 6),
        unpriced_runs=sum(1 for r in records if r["status"] == "done" and r.get("cost") is None),
        cost_budget=config.cost_budget,
        budget_stopped=bool(driver.skipped),
        skipped=driver.skipped,
        wall_seconds=0.0,
    )
