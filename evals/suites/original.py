"""The unperturbed baseline as a suite: each dataset instance on its own repository, in the suite format.

Paired robustness statistics compare an agent on a perturbed task with the same agent on the original
one, so the baseline is exported exactly like the variants: a fresh single-commit repository holding the
tree at `base_commit` (no history, so no later commit — the fix — is reachable), the agent-visible row
in tasks.jsonl, and the gold patch only under ground_truth/.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from repoanchor.evals.harness.datasets import load_dataset, safe_name
from repoanchor.evals.harness.instance_env import source_repo
from repoanchor.evals.suites.export import dumps, grading_row, jsonl, sha256_file, task_row, tree_id
from repoanchor.evals.suites.selection import Selection, select_load
from repoanchor.perturb.atomic import write_atomic
from repoanchor.perturb.variant_git import carry_version_tag, init_single_commit, tracked_files


def export_tree(source: Path, commit: str, dest: Path) -> None:
    """The files of `commit`, as a checkout writes them, without a .git.

    Through a private index rather than `git archive`, which drops `export-ignore` files and rewrites
    `export-subst` ones (setuptools_scm's .git_archival.txt): a task must hold the tree as checked out."""
    # git runs in the source (-C), so a relative prefix would land inside the user's clone, not in the suite.
    dest = Path(dest).resolve()
    dest.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_INDEX_FILE=str(Path(scratch) / "index"), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
        for args in (["read-tree", commit], ["checkout-index", "--all", "--force", f"--prefix={dest}/"]):
            subprocess.run(["git", "-C", str(source), *args], env=env, check=True, capture_output=True)


def build_original_suite(
    dataset: str | Path,
    out: Path,
    *,
    repo_cache: Path | None = None,
    selection: Selection | None = None,
    preset: dict | None = None,
) -> dict:
    """Writes SUITE/{tasks.jsonl, repos/, ground_truth/, manifest.json}; returns the manifest."""
    loaded, chosen = select_load(load_dataset(dataset).require_rows(), selection)
    out = Path(out)
    tasks, hashes = [], {}
    for row in loaded.rows:
        name = safe_name(row["instance_id"])
        repo = out / "repos" / name
        if repo.exists():  # a rerun: the repository was exported before
            commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
            commit = commit.stdout.strip()
        else:
            source = source_repo(row, repo_cache=repo_cache)
            export_tree(source, row["base_commit"], repo)
            commit = init_single_commit(repo, expect=tracked_files(source, row["base_commit"]))
            carry_version_tag(source, repo, row["base_commit"])  # setuptools_scm projects read it, as variants do
        truth = {"row": grading_row(row, row["instance_id"], commit, row["patch"])}
        write_atomic(out / "ground_truth" / f"{name}.json", dumps(truth))
        tasks.append(task_row(row, row["instance_id"], "original", commit))
        hashes.setdefault("repos", {})[name] = tree_id(repo)
        hashes.setdefault("ground_truth", {})[name] = sha256_file(out / "ground_truth" / f"{name}.json")
    write_atomic(out / "tasks.jsonl", jsonl(tasks))
    manifest = {
        "suite": "original",  # the key every suite's manifest names its kind by (validate, results read it)
        "kind": "original",
        "dataset": str(dataset),
        "tasks": len(tasks),
        "hashes": hashes,  # as every suite's: `suite validate` refuses a task whose tree or truth changed
        "malformed_rows": [str(error) for error in loaded.errors],
    }
    manifest |= {"selection": chosen} if chosen is not None else {}
    manifest |= {"preset": preset} if preset is not None else {}
    write_atomic(out / "manifest.json", dumps(manifest))
    return manifest
