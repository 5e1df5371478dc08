"""A tiny git repository with one real bug and a test that exposes it: the scaffolds' end-to-end fixture."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CALC = '''"""Arithmetic helpers."""


def add(a, b):
    return a - b


def double(x):
    return add(x, x)
'''

TEST_CALC = """from calc import add, double


def test_add():
    assert add(2, 3) == 5


def test_double():
    assert double(4) == 8
"""

ISSUE = "add(2, 3) returns -1 instead of 5; add() should return the sum of its arguments."
FIX_SED = "sed -i 's/return a - b/return a + b/' calc.py"
CHECK = "python3 -c 'from calc import add; assert add(2, 3) == 5; print(\"ok\")'"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=fixture", "-c", "user.email=fixture@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_bug_repo(root: Path) -> Path:
    """`root`/calc: a one-commit git repository whose add() subtracts."""
    repo = root / "calc"
    repo.mkdir(parents=True)
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TEST_CALC)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc with a bug")
    return repo


def patch_passes_tests(repo: Path, patch: str, scratch: Path) -> bool:
    """Apply `patch` to a fresh clone of `repo` and run its tests; True when they all pass."""
    clone = scratch / "graded"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    applied = subprocess.run(["git", "-C", str(clone), "apply", "-"], input=patch, text=True, capture_output=True)
    if applied.returncode != 0:
        raise AssertionError(f"patch does not apply: {applied.stderr}")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=clone, capture_output=True
    )
    return run.returncode == 0
