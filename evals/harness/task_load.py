"""`repoanchor run TASK`'s TASK, whichever form it takes (see `evals.harness.tasks`): a suite task `SUITE#TASK_ID`,
a dataset row `DATASET#INSTANCE_ID`, or a task directory. Above both `tasks` and `suite_format`."""

from __future__ import annotations

from pathlib import Path

from repoanchor.evals.harness.suite_format import as_task, read_suite_tasks
from repoanchor.evals.harness.tasks import Task, TaskError, load_dataset_task, load_task_dir


def load_suite_task(suite: Path, task_id: str) -> Task:
    rows = [row for row in read_suite_tasks(suite) if row.instance_id == task_id]
    if not rows:
        raise TaskError(f"{suite}: no task {task_id!r} in its tasks.jsonl")
    return as_task(suite, rows[0])


def load_task(spec: str, repo: Path | None = None, repo_cache: Path | None = None) -> Task:
    folder, _, task_id = spec.rpartition("#")
    if task_id and (Path(folder) / "tasks.jsonl").is_file():
        return load_suite_task(Path(folder), task_id)
    if "#" in spec and not Path(spec).is_dir():
        return load_dataset_task(spec, repo, repo_cache)
    folder = Path(spec)
    if not folder.is_dir():
        raise TaskError(f"{spec}: neither a task directory nor DATASET#INSTANCE_ID")
    return load_task_dir(folder)
