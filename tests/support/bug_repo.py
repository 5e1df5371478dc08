"""A tiny git repository with one real bug and a test that exposes it: the scaffolds' end-to-end fixture."""

from __future__ import annotations

import json
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

# The grading row's test patch: one more test the fix makes pass, one that passes with or without it.
NEW_TESTS = """

def test_add_negatives():
    assert add(-1, -2) == -3


def test_double_zero():
    assert double(0) == 0
"""
FAIL_TO_PASS = ["test_calc.py::test_add", "test_calc.py::test_double", "test_calc.py::test_add_negatives"]
PASS_TO_PASS = ["test_calc.py::test_double_zero"]
TEST_CMD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -rA -p no:cacheprovider {tests}"

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


def grading_row(repo: Path, instance_id: str) -> dict:
    """The SWE-bench grading row of the bug in `repo` (from `make_bug_repo`, unchanged): the fix as gold patch,
    NEW_TESTS as test patch, FAIL_TO_PASS (fail before the fix, pass after) and PASS_TO_PASS, run by pytest and
    read by swebench's pytest log parser, as a suite's ground truth holds it for our grader."""
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "calc.py").write_text(CALC.replace("return a - b", "return a + b"))
    patch = git(repo, "diff")
    git(repo, "checkout", "-q", "--", "calc.py")
    (repo / "test_calc.py").write_text(TEST_CALC + NEW_TESTS)
    test_patch = git(repo, "diff")
    git(repo, "checkout", "-q", "--", "test_calc.py")
    return {
        "instance_id": instance_id, "repo": "demo/calc", "version": "1.0", "base_commit": base,
        "environment_setup_commit": base, "problem_statement": ISSUE, "patch": patch, "test_patch": test_patch,
        "FAIL_TO_PASS": FAIL_TO_PASS, "PASS_TO_PASS": PASS_TO_PASS, "repoanchor_test_cmd": TEST_CMD,
        "repoanchor_log_parser": "pytest",
    }  # fmt: skip


def write_ground_truth(suite: Path, instance_id: str, repo: Path, **row_fields) -> Path:
    """`suite`/ground_truth/<instance_id>.json with the grading row of `repo`'s bug (`row_fields` override)."""
    path = suite / "ground_truth" / f"{instance_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"row": {**grading_row(repo, instance_id), **row_fields}}), encoding="utf-8")
    return path


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
