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

from pydantic import BaseModel, ConfigDict

from repoanchor.evals.harness.tasks import Task, TaskError

TASKS_FILE = "tasks.jsonl"
MANIFEST_FILE = "manifest.json"
GROUND_TRUTH_DIR = "ground_truth"
HIDDEN_FIELDS = ("patch", "test_patch", "repoanchor_gold_patch", "repoanchor_ground_truth")


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
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskError(f"{path}:{number}: not JSON: {exc}") from exc
        leaked = [field for field in HIDDEN_FIELDS if field in row]
        if leaked:
            raise TaskError(f"{path}:{number}: agent-visible row carries ground truth fields {leaked}")
        tasks.append(SuiteTask.model_validate(row))
    return tasks


def as_task(suite: Path, row: SuiteTask) -> Task:
    """The runnable task: the row's issue text on its repository in the suite folder."""
    return Task(
        instance_id=row.instance_id,
        problem_statement=row.problem_statement,
        repo=(suite / row.repoanchor_repo).resolve(),
        base_commit=row.base_commit,
        source_repo=getattr(row, "repo", None),
        version=None if getattr(row, "version", None) is None else str(row.version),
    )
