"""The on-disk form of a task suite: what the suite builders write and the run matrix reads.

    SUITE/
      manifest.json            suite kind, tool versions, seeds, content hashes, counts
      tasks.jsonl              one agent-visible row per task (SWE-bench fields + repoanchor_* fields)
      repos/<task_id>/         the repository the agent works on (a git repo, one commit)
      ground_truth/<task_id>.json   gold / remapped patches, test patch, erased values: never shown
      rejected.jsonl           instances that did not validate, with their reasons

`tasks.jsonl` rows never carry `patch`, `test_patch` or any ground truth; the grader reads those
from `ground_truth/`. `repoanchor_repo` is the task's repository path relative to the suite folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from repoanchor.evals.harness.datasets import safe_name
from repoanchor.evals.harness.tasks import Task, TaskError

TASKS_FILE = "tasks.jsonl"
MANIFEST_FILE = "manifest.json"
GROUND_TRUTH_DIR = "ground_truth"
HIDDEN_FIELDS = ("patch", "test_patch", "repoanchor_gold_patch", "repoanchor_ground_truth")


def ground_truth_file(suite: Path, task_id: str) -> Path:
    """Where a task's ground truth lives: keyed by the task id (as every reader must key it), never by the
    folder its repository happens to be in."""
    return suite / GROUND_TRUTH_DIR / f"{safe_name(task_id)}.json"


class SuiteTask(BaseModel):
    """The fields every row of tasks.jsonl has; SWE-bench's own fields ride along as extras."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    instance_id: str
    """The task id: `<original instance id>` or `<original>__<suite>-<n>` for derived tasks."""
    problem_statement: str
    base_commit: str
    repoanchor_suite: str
    """perturb | spt | extend | original"""
    repoanchor_repo: str
    """Repository folder, relative to the suite folder."""
    repoanchor_source_instance: str
    """The dataset instance this task was derived from (the pairing key for paired statistics)."""
    repoanchor_family: str | None = None
    """Extend family (proxy_chain, runtime_target, missing_constant, multi_file); None otherwise."""
    repoanchor_allowed_files: list[str] | None = None
    """Files the agent may change (Extend); None means any non-test file."""


def read_suite_tasks(suite: Path) -> list[SuiteTask]:
    path = suite / TASKS_FILE
    if not path.is_file():
        raise TaskError(f"{suite}: not a suite folder (no {TASKS_FILE})")
    tasks = []
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise TaskError(f"{path}:{number}: not JSON text: {exc}") from exc
        if not isinstance(row, dict):
            raise TaskError(f"{path}:{number}: a row must be an object, not {type(row).__name__}")
        leaked = [field for field in HIDDEN_FIELDS if field in row]
        if leaked:
            raise TaskError(f"{path}:{number}: agent-visible row carries ground truth fields {leaked}")
        try:
            tasks.append(SuiteTask.model_validate(row))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'row'}: {e['msg']}" for e in exc.errors())
            raise TaskError(f"{path}:{number}: {problems}") from None
    return tasks


def as_task(suite: Path, row: SuiteTask) -> Task:
    """The runnable task: the row's issue text on its repository in the suite folder (never outside it)."""
    repo = (suite / row.repoanchor_repo).resolve()
    if not repo.is_relative_to(Path(suite).resolve()):
        raise TaskError(
            f"{suite / TASKS_FILE}: task {row.instance_id!r}: repoanchor_repo {row.repoanchor_repo!r} leads out of "
            "the suite folder"
        )
    return Task(
        instance_id=row.instance_id,
        problem_statement=row.problem_statement,
        repo=repo,
        base_commit=row.base_commit,
        source_repo=getattr(row, "repo", None),
        version=None if getattr(row, "version", None) is None else str(row.version),
    )
