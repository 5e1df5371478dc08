"""Nothing of the ground truth reaches the agent: every file of every task repository, every git object
and the whole history are scanned for the gold patch, the test patch, the seeds, metadata keys and the
Extend families' erased contents; so are the task rows and the environment an agent's commands get."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from test_suite import EXTEND_INSTANCE, built_suite, fixture_dataset, rows, truth

from repoanchor.evals.demo.fixture_project import fixture_rows
from repoanchor.scaffolds.environments.local import command_environment

KINDS = ("perturb", "spt", "extend")
# Names only the builder's records use; a tree holding one has seen the metadata.
METADATA_KEYS = ("path_resolution_map", "variant_seed", "suite_seed", "FAIL_TO_PASS", "PASS_TO_PASS", "repoanchor")


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, input=stdin, capture_output=True, text=True, check=True, errors="replace"
    ).stdout


def visible_text(repo: Path) -> str:
    """Every file of the repository (`.git` included, raw) plus every object and the history, decompressed."""
    files = [p.read_bytes().decode("utf-8", "replace") for p in sorted(repo.rglob("*")) if p.is_file()]
    objects = _git(repo, "cat-file", "--batch-all-objects", "--batch")
    history = _git(repo, "log", "-p", "--all", "--reflog")
    return "\n".join([*files, objects, history])


def added_lines(patch: str, original: str) -> list[str]:
    """Distinctive lines a patch adds: long enough to mean something, and not already in the original tree."""
    lines = {line[1:].strip() for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")}
    return sorted(line for line in lines if len(line) >= 12 and line not in original)


@pytest.fixture(scope="module")
def original_text(tmp_path_factory) -> str:
    cache, _ = fixture_dataset(tmp_path_factory)
    return "\n".join(p.read_text() for p in sorted((cache / "ledger").rglob("*.py")))


def secrets(record: dict, original: str) -> list[str]:
    """What the agent must not see for this task."""
    row = record["row"]
    found = added_lines(record.get("gold_patch") or row["patch"], original) + added_lines(row["test_patch"], original)
    found += [str(v) for v in record["seeds"].values() if isinstance(v, int) and v > 10**6]
    found += row["FAIL_TO_PASS"]
    return [*found, *METADATA_KEYS]


@pytest.mark.parametrize("kind", KINDS)
def test_task_repositories_hold_no_ground_truth(kind, tmp_path_factory, original_text):
    suite = built_suite(kind, tmp_path_factory)
    tasks = rows(suite / "tasks.jsonl")
    assert tasks
    for task in tasks:
        repo = suite / task["repoanchor_repo"]
        record = truth(suite, task["instance_id"])
        text = visible_text(repo)
        leaked = [s for s in secrets(record, original_text) if s in text]
        assert not leaked, f"{task['instance_id']}: {leaked[:5]}"
        assert _git(repo, "rev-list", "--all", "--count").strip() == "1"
        assert (
            _git(repo, "log", "--format=%an <%ae> %s").strip() == "Maintainers <maintainers@example.com> Initial commit"
        )
        assert _git(repo, "status", "--porcelain", "--ignored") == ""
        names = [p.name for p in repo.rglob("*") if ".git" not in p.relative_to(repo).parts]
        assert not [n for n in names if n.endswith((".orig", ".rej", ".pyc")) or n == "__pycache__"]
        if kind == "perturb":  # control: with the remapped fix applied, the scan does find the gold lines
            fixed = tmp_path_factory.mktemp("control") / "repo"
            _git(suite, "clone", "-q", str(repo), str(fixed))
            _git(fixed, "apply", "-", stdin=record["row"]["patch"])
            gold = added_lines(record["gold_patch"], original_text)
            assert gold
            assert [line for line in gold if line in visible_text(fixed)]
        # The agent-visible row carries no ground truth either.
        row_text = json.dumps(task)
        assert not [s for s in secrets(record, original_text) if s in row_text and s not in METADATA_KEYS[-1:]]


def test_extend_erased_contents_are_nowhere_in_the_task_repositories(tmp_path_factory):
    suite = built_suite("extend", tmp_path_factory)
    checked = 0
    for task in rows(suite / "tasks.jsonl"):
        repo = suite / task["repoanchor_repo"]
        gt = truth(suite, task["instance_id"])["extend"]["ground_truth"]
        blobs = set(_git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())
        for path, content in (gt.get("solution") or {}).get("files", {}).items():
            # The erased file's content is no blob of the repository, and no file holds it.
            assert _git(repo, "hash-object", "--stdin", stdin=content).strip() not in blobs, path
            assert (repo / path).read_text() != content
            checked += 1
        for item in gt.get("erased", []):
            if "key" in item:  # missing_constant: the lost entry is gone from its resource
                resource = json.loads((repo / item["path"]).read_text())
                assert item["key"] not in resource
    assert checked >= 3


def test_the_agent_environment_carries_nothing_of_the_build(tmp_path_factory, tmp_path):
    for kind in KINDS:
        built_suite(kind, tmp_path_factory)  # the build ran in this process; it must not have exported anything
    env = command_environment(tmp_path / "home")
    text = json.dumps(env)
    assert not [k for k in env if k.startswith(("REPOANCHOR", "GIT_"))]
    for kind in KINDS:
        suite = built_suite(kind, tmp_path_factory)
        for task in rows(suite / "tasks.jsonl"):
            record = truth(suite, task["instance_id"])
            assert not [str(v) for v in record["seeds"].values() if str(v) in text and isinstance(v, int) and v > 9]
    row = {r["instance_id"]: r for r in fixture_rows()}[EXTEND_INSTANCE]
    assert not [line for line in added_lines(row["patch"], "") if line in text]
    assert "path_resolution_map" not in text
    assert not any("path_resolution_map" in v for v in os.environ.values())
