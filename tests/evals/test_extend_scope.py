"""The scope check: every change against the base commit, untracked and committed ones included."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from repoanchor.evals.suites.extend import changed_paths, scope_violations
from repoanchor.evals.suites.extend.models import SCOPE_IGNORE
from repoanchor.evals.suites.extend.scope import ScopeError
from repoanchor.perturb.variant_git import init_single_commit


def _git(repo: Path, *args: str) -> None:
    env_args = ["-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *env_args, *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "a.py").write_text("A = 1\n")
    (root / "pkg" / "b.py").write_text("B = 2\n")
    (root / "tests" / "test_a.py").write_text("def test(): pass\n")
    (root / ".gitignore").write_text("*.log\n")
    return root, init_single_commit(root)


def test_no_change(repo):
    root, base = repo
    assert changed_paths(root, base, SCOPE_IGNORE) == []


def test_every_kind_of_change(repo):
    root, base = repo
    (root / "pkg" / "a.py").write_text("A = 3\n")  # modified
    (root / "pkg" / "b.py").unlink()  # deleted
    (root / "pkg" / "new.py").write_text("")  # untracked
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"x")  # litter: ignored
    (root / ".pytest_cache").mkdir()
    (root / ".pytest_cache" / "v").write_text("")
    (root / "run.log").write_text("")  # ignored by the repository's .gitignore
    assert changed_paths(root, base, SCOPE_IGNORE) == ["pkg/a.py", "pkg/b.py", "pkg/new.py"]


def test_commits_and_renames_are_seen(repo):
    root, base = repo
    _git(root, "mv", "pkg/b.py", "pkg/c.py")
    _git(root, "commit", "-qm", "agent commit")
    (root / "pkg" / "a.py").write_text("A = 4\n")
    _git(root, "add", "pkg/a.py")  # staged only
    assert changed_paths(root, base, SCOPE_IGNORE) == ["pkg/a.py", "pkg/b.py", "pkg/c.py"]
    index = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=root, capture_output=True, text=True)
    assert index.stdout.split() == ["pkg/a.py"]  # the agent's own index is untouched


def test_violations():
    changed = ["pkg/a.py", "pkg/new.py", "tests/test_a.py"]
    assert scope_violations(changed, ["pkg/a.py"]) == ["pkg/new.py", "tests/test_a.py"]
    assert scope_violations(changed, None) == ["tests/test_a.py"]
    assert scope_violations(["pkg/a.py", "data/case.txt"], None, test_files=["data/case.txt"]) == ["data/case.txt"]


def test_unknown_base_is_an_error(repo):
    root, _ = repo
    with pytest.raises(ScopeError):
        changed_paths(root, "0" * 40)


def test_a_same_size_edit_in_the_second_the_index_was_written_is_seen(repo):
    # Racily clean: stat data equal to the index entry (ctime and inode ignored by this config) and the
    # index written in that second; git checks the content only when the index keeps its own mtime.
    root, base = repo
    _git(root, "config", "core.checkStat", "minimal")
    _git(root, "config", "core.trustctime", "false")
    stamp = (1600000000, 1600000000)
    a = root / "pkg" / "a.py"
    os.utime(a, stamp)
    _git(root, "update-index", "-q", "--refresh")
    os.utime(root / ".git" / "index", stamp)
    a.write_text("A = 9\n")
    os.utime(a, stamp)
    assert changed_paths(root, base, SCOPE_IGNORE) == ["pkg/a.py"]
