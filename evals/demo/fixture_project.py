"""The embedded fixture: a small real project (`ledger`) and a SWE-bench-format dataset about it.

`evals/fixture/project/` is the project as a plain folder tree (package data cannot hold a `.git`), and
`evals/fixture/dataset.jsonl` holds its instances. `materialize_fixture` turns the tree into a git
repository with exactly one commit whose hash is fixed (author, committer, dates and file modes are all
pinned), so the dataset's `base_commit` is stable across machines and the shipped file already names it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from repoanchor.evals.harness.instance_env import cached_clone

FIXTURE_DIR = Path(__file__).resolve().parent / "fixture"
PROJECT_DIR = FIXTURE_DIR / "project"
DATASET_PATH = FIXTURE_DIR / "dataset.jsonl"
REPO_NAME = "fixture/ledger"

# Written at materialisation rather than shipped: package-data globs skip dotfiles.
GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n.env\n"
TRACKED_IGNORED = {"tests/data/.env": "LEDGER_TEST_LOCALE=C\n"}
"""Files the repository tracks although its .gitignore matches them (`git add --force`), as real projects
do (flask's tests/test_apps/.env): the tests read this one, so a task repository that lost it fails."""
_PINNED = {
    "GIT_AUTHOR_NAME": "Ledger Maintainers",
    "GIT_AUTHOR_EMAIL": "maintainers@ledger.invalid",
    "GIT_AUTHOR_DATE": "2024-03-01T09:00:00+0000",
    "GIT_COMMITTER_NAME": "Ledger Maintainers",
    "GIT_COMMITTER_EMAIL": "maintainers@ledger.invalid",
    "GIT_COMMITTER_DATE": "2024-03-01T09:00:00+0000",
}
# Settings a user's ~/.gitconfig could set that would change the commit or its tree.
_GIT_CONFIG = ["-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_PINNED, "GIT_CONFIG_NOSYSTEM": "1"}
    proc = subprocess.run(["git", *_GIT_CONFIG, *args], cwd=repo, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _copy_project(repo: Path) -> None:
    caches = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".ruff_cache")
    shutil.copytree(PROJECT_DIR, repo, ignore=caches)
    (repo / ".gitignore").write_text(GITIGNORE)
    for rel, text in TRACKED_IGNORED.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    # Installed package data may carry other mode bits; git records 644 vs 755, which changes the hash.
    for path in repo.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def make_fixture_repo(dest: Path) -> str:
    """Create the ledger repository at `dest` (must not exist) with one pinned commit; return its hash."""
    dest = Path(dest)
    if dest.exists():
        raise FileExistsError(f"{dest} already exists")
    _copy_project(dest)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "add", "--force", *TRACKED_IGNORED)
    _git(dest, "commit", "-q", "-m", "ledger 0.3.0")
    return _git(dest, "rev-parse", "HEAD")


def fixture_rows(base_commit: str | None = None) -> list[dict]:
    """The shipped instances, with `base_commit`/`environment_setup_commit` replaced when one is given."""
    rows = [json.loads(line) for line in DATASET_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    if base_commit:
        for row in rows:
            row["base_commit"] = row["environment_setup_commit"] = base_commit
    return rows


def materialize_fixture(dest: Path) -> tuple[Path, Path]:
    """Write `dest/ledger` (the git repository) and `dest/dataset.jsonl`; return both paths.

    The repository folder is also laid out as a repo cache (`dest/fixture__ledger` is a symlink to it), so
    `--repo-cache dest` finds it by the SWE-bench `owner__name` convention.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    repo = dest / "ledger"
    commit = make_fixture_repo(repo)
    cached_clone(dest, REPO_NAME).symlink_to(repo.name)
    dataset = dest / "dataset.jsonl"
    lines = [json.dumps(row, ensure_ascii=False) for row in fixture_rows(commit)]
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return repo, dataset
