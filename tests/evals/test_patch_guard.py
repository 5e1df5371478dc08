"""Which file diffs of a candidate patch the grader keeps: real git diffs of every kind, each policy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repoanchor.evals.harness.patch_guard import file_diffs, guard


def git_diff(tmp_path: Path, before: dict[str, str | bytes], after: dict[str, str | bytes | None]) -> str:
    """The `git diff --binary` from `before` to `after` (None deletes a file), made by git itself."""
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    run = lambda *args: subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)  # noqa: E731
    run("init", "-q")
    for name, content in before.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    for name, content in after.items():
        path = repo / name
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    run("add", "-A")
    return run("diff", "--cached", "--binary").stdout


BASE = {
    "pkg/calc.py": "def add(a, b):\n    return a - b\n",
    "setup.cfg": "[metadata]\nname = x\n",
    "tests/t.py": "x = 1\n",
}
FIX = {"pkg/calc.py": "def add(a, b):\n    return a + b\n"}


@pytest.mark.parametrize(
    ("change", "path", "why"),
    [
        ({"conftest.py": "import os\n"}, "conftest.py", "conftest.py"),
        ({"pkg/sub/conftest.py": "x = 1\n"}, "pkg/sub/conftest.py", "conftest.py"),
        ({"tests/t.py": "x = 2\n"}, "tests/t.py", "a test file"),
        ({"tests/t.py": None}, "tests/t.py", "a test file"),
        ({"pytest.ini": "[pytest]\naddopts = -p evil\n"}, "pytest.ini", "pytest configuration"),
        ({"tox.ini": "[pytest]\n"}, "tox.ini", "pytest configuration"),
        ({"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\naddopts = -p evil\n"}, "setup.cfg", "mentions pytest"),
        ({"sitecustomize.py": "import os\n"}, "sitecustomize.py", "every start of Python"),
        ({"evil.pth": "import os\n"}, "evil.pth", "every start of Python"),
        ({"pkg/plug.py": "def pytest_configure(config):\n    pass\n"}, "pkg/plug.py", "pytest plugin"),
        ({"tests/data.bin": b"\x00\x01\x02binary"}, "tests/data.bin", "a test file"),
    ],
)
def test_guarded_changes_are_stripped_and_the_fix_is_kept(tmp_path, change, path, why):
    patch = git_diff(tmp_path, BASE, {**FIX, **change})
    stripped = guard(patch)
    assert list(stripped.touched) == [path]
    assert why in stripped.touched[path]
    assert not stripped.refused
    assert stripped.patch == git_diff(tmp_path / "fix-only", BASE, FIX)  # exactly the fix, byte for byte
    refused = guard(patch, "refuse")
    assert refused.refused
    assert guard(patch, "keep") == (patch, stripped.touched, False)


def test_a_fix_alone_is_untouched_and_unrelated_config_edits_pass(tmp_path):
    patch = git_diff(tmp_path, BASE, {**FIX, "setup.cfg": "[metadata]\nname = y\n"})
    assert guard(patch) == (patch, {}, False)
    assert [path for path, _ in file_diffs(patch)] == ["pkg/calc.py", "setup.cfg"]
    assert guard("") == ("", {}, False)


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="unknown test-edit policy 'lenient'"):
        guard("", "lenient")
