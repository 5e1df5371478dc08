"""One task for `repoanchor run`: an issue text plus the repository (and commit) it is about.

Accepted forms:
- a task directory holding `task.json` (or `task.yaml`) with `problem_statement`, optional `instance_id`
  and `base_commit`, and the repository either as a `repo/` sub-folder or at `repo_path` in the file;
- a suite task `SUITE#TASK_ID` (a folder written by `repoanchor suite build`);
- a dataset row `DATASET#INSTANCE_ID` (SWE-bench JSONL, JSON or parquet) with the repository given by
  `--repo PATH` or found in `--repo-cache DIR` as `owner__name` (the SWE-bench image-name convention).
Only the fields an agent may see are kept: gold and test patches never leave the dataset file.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from pydantic import BaseModel

from repoanchor.evals.harness.datasets import DatasetError, load_dataset
from repoanchor.evals.harness.instance_env import cached_clone


class TaskError(ValueError):
    """A task that cannot be loaded; the message names the file and the problem."""


class Task(BaseModel):
    instance_id: str
    problem_statement: str
    repo: Path
    base_commit: str = "HEAD"
    source_repo: str | None = None
    """The dataset's `owner/name`, with `version` what picks the task's environment image; None for a task
    directory, which has no image of its own."""
    version: str | None = None


def _task_file(folder: Path) -> Path:
    for name in ("task.json", "task.yaml", "task.yml"):
        if (folder / name).is_file():
            return folder / name
    raise TaskError(f"{folder}: no task.json or task.yaml in this task directory")


def load_task_dir(folder: Path) -> Task:
    path = _task_file(folder)
    try:
        data = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise TaskError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from exc
    if not isinstance(data, dict) or not str(data.get("problem_statement") or "").strip():
        raise TaskError(f"{path}: needs a non-empty 'problem_statement'")
    repo = (folder / data["repo_path"]).resolve() if data.get("repo_path") else folder / "repo"
    if not (repo / ".git").exists():
        raise TaskError(f"{path}: repository {repo} is not a git checkout")
    return Task(
        instance_id=str(data.get("instance_id") or folder.name),
        problem_statement=data["problem_statement"],
        repo=repo,
        base_commit=str(data.get("base_commit") or "HEAD"),
    )


def dataset_rows(path: Path) -> list[dict]:
    """The well-formed rows of a dataset file (see `evals.harness.datasets`); malformed rows are left out."""
    try:
        return load_dataset(path).rows
    except DatasetError as exc:
        raise TaskError(str(exc)) from exc


def load_dataset_task(spec: str, repo: Path | None, repo_cache: Path | None) -> Task:
    file, _, instance_id = spec.rpartition("#")
    try:
        loaded = load_dataset(Path(file))
    except DatasetError as exc:
        raise TaskError(str(exc)) from exc
    rows = [row for row in loaded.rows if row.get("instance_id") == instance_id]
    if not rows:
        bad = [str(error) for error in loaded.errors if error.instance_id == instance_id]
        raise TaskError(f"{file}: {bad[0] if bad else f'no row with instance_id {instance_id!r}'}")
    row = rows[0]
    if repo is None and repo_cache is not None:
        repo = cached_clone(repo_cache, str(row.get("repo", "")))
    if repo is None or not (repo / ".git").exists():
        raise TaskError(f"{instance_id}: give the repository with --repo PATH or --repo-cache DIR (tried {repo})")
    return Task(
        instance_id=instance_id,
        problem_statement=row["problem_statement"],
        repo=repo.resolve(),
        base_commit=row.get("base_commit") or "HEAD",
        source_repo=row.get("repo"),
        version=None if row.get("version") is None else str(row["version"]),
    )
