"""Writing a suite folder (format: `evals.suite_format`): task rows, ground truth, rejections, manifest.

Everything here is byte-deterministic for the same dataset, config and seed: no timestamps, no
absolute paths (work folders are scrubbed to placeholders), keys sorted. Timings live only under
the manifest's `timing` key, so two builds compare equal once that key is dropped. Every file is
written to a temporary name and renamed, so a killed build never leaves half a file behind.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from repoanchor.evals.harness.datasets import safe_name
from repoanchor.evals.harness.suite_format import GROUND_TRUTH_DIR, MANIFEST_FILE, TASKS_FILE
from repoanchor.perturb.atomic import write_atomic
from repoanchor.perturb.metadata import tool_version

FORMAT = "repoanchor.suite/1"
TRUTH_FORMAT = "repoanchor.ground-truth/1"
REJECTED_FILE = "rejected.jsonl"
PARQUET_FILE = "tasks.parquet"
TIMING_FIELDS = ("timing",)
# SWE-bench fields an agent may see; patches and test lists (they name the hidden tests) stay out.
VISIBLE_FIELDS = ("repo", "problem_statement", "hints_text", "created_at", "version")


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the temporary files a killed `write_atomic` left in `folder` (not below); the removed paths."""
    stale = sorted(folder.glob(".*.tmp")) if folder.is_dir() else []
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n" for row in rows)


def scrub(value: Any, replacements: dict[str, str]) -> Any:
    """`value` with every occurrence of each (absolute path) key replaced by its placeholder."""
    if isinstance(value, str):
        for old, new in replacements.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, replacements) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, replacements) for v in value]
    return value


def task_row(row: dict, task_id: str, suite: str, commit: str, **suite_fields: Any) -> dict:
    """The agent-visible row: SWE-bench's visible fields on the variant's commit, plus suite fields."""
    visible = {key: row[key] for key in VISIBLE_FIELDS if key in row}
    return {
        **visible,
        "instance_id": task_id,
        "base_commit": commit,
        "repoanchor_suite": suite,
        "repoanchor_repo": f"repos/{safe_name(task_id)}",
        "repoanchor_source_instance": row["instance_id"],
        "repoanchor_family": None,
        "repoanchor_allowed_files": None,
        **suite_fields,
    }


def grading_row(row: dict, task_id: str, commit: str, patch: str) -> dict:
    """The dataset row re-pointed at the variant: what `evals.harness.grading.run_tests`/`grade` take."""
    return {**row, "instance_id": task_id, "base_commit": commit, "environment_setup_commit": commit, "patch": patch}


def rejection(row: dict, suite: str, stage: str, reason: str, task_id: str | None = None, **detail: Any) -> dict:
    return {
        "instance_id": row.get("instance_id"),
        "task_id": task_id,
        "suite": suite,
        "stage": stage,
        "reason": reason,
        "detail": detail or None,
    }


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_id(repo: Path) -> str:
    """The git tree id of the repository's one commit: a content hash of every file an agent sees."""
    proc = subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=repo, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def tool_versions() -> dict[str, str]:
    def package(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return {
        "repoanchor": tool_version(),
        "libcst": package("libcst"),
        "swebench": package("swebench"),
        "python": platform.python_version(),
        "git": git.removeprefix("git version "),
    }


def write_tables(out: Path, tasks: list[dict], rejected: list[dict]) -> dict[str, str]:
    """tasks.jsonl, tasks.parquet (when pyarrow is present) and rejected.jsonl; their sha256."""
    write_atomic(out / TASKS_FILE, jsonl(tasks))
    write_atomic(out / REJECTED_FILE, jsonl(rejected))
    names = [TASKS_FILE, REJECTED_FILE]
    try:
        import pandas as pd

        frame = pd.DataFrame(tasks, columns=sorted({k for row in tasks for k in row}) or ["instance_id"])
        tmp = out / f".{PARQUET_FILE}.tmp"
        frame.to_parquet(tmp, index=False)
        tmp.replace(out / PARQUET_FILE)
        names.append(PARQUET_FILE)
    except ImportError:  # parquet is a convenience; JSONL is the format
        pass
    return {name: sha256_file(out / name) for name in names}


def manifest(
    out: Path, header: dict, tasks: list[dict], rejected: list[dict], timing: dict, environments: dict | None = None
) -> dict:
    """The manifest: header (suite, dataset, seed, config), tools, counts, content hashes, and each instance's
    environment (route; for an environment image its name and the Python it holds)."""
    hashes = write_tables(out, tasks, rejected)
    ids = [safe_name(task["instance_id"]) for task in tasks]
    hashes["repos"] = {name: tree_id(out / "repos" / name) for name in ids}
    hashes["ground_truth"] = {name: sha256_file(out / GROUND_TRUTH_DIR / f"{name}.json") for name in ids}
    counts = {
        "tasks": len(tasks),
        "rejected": len(rejected),
        "source_instances_with_tasks": len({task["repoanchor_source_instance"] for task in tasks}),
    }
    data = {"format": FORMAT, **header, "tools": tool_versions(), "counts": counts, "hashes": hashes}
    data["timing"] = timing
    data["environments"] = environments or {}
    write_atomic(out / MANIFEST_FILE, dumps(data))
    return data
