"""A spec's requirements and environment files are read at the row's environment_setup_commit, as SWE-bench reads
them, not at the instance's base commit (dependencies/setup_files.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repoanchor.evals.harness import venv_build
from repoanchor.evals.harness.dependencies.requirements_file import requirements_text
from repoanchor.evals.harness.dependencies.setup_files import SetupFiles
from repoanchor.scaffolds.records import InfraError


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def history(tmp_path):
    """A base commit without the requirements files, then the environment setup commit that adds them
    (pydata__xarray-3095: its base predates ci/requirements/environment.yml), checked out at the base."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    base = _commit(repo, {"setup.py": "print('base')\n"})
    setup = _commit(
        repo, {"requirements/dev.txt": "-r tests.txt\n-e .\nflake8\n", "requirements/tests.txt": "pytest\n"}
    )
    _git(repo, "checkout", "-q", base)
    return repo, setup


def test_requirements_come_from_the_environment_setup_commit(history, tmp_path):
    checkout, setup = history
    files = SetupFiles(checkout, setup)
    assert (files.where(), files.fallback) == (f"environment_setup_commit {setup[:12]}", None)
    assert requirements_text("pallets/flask", files) == "pytest\nflake8"  # its -r include read there too
    venv_build.dependency_steps("pallets/flask", {"packages": "requirements.txt"}, files, tmp_path)
    assert (tmp_path / "requirements.txt").read_text() == "pytest\nflake8"
    with pytest.raises(InfraError, match="in the checkout"):  # the base commit alone has none of them
        requirements_text("pallets/flask", SetupFiles(checkout))


def test_a_commit_outside_the_checkouts_history_falls_back_to_the_checkout_and_says_so(history):
    checkout, _ = history
    (checkout / "requirements").mkdir()
    (checkout / "requirements" / "dev.txt").write_text("six\n")  # a one-commit task repository's own file
    files = SetupFiles(checkout, "0" * 40)
    assert files.where() == "the checkout"
    assert (
        files.fallback
        == f"setup files read from the checkout: environment_setup_commit {'0' * 40} is not in its history"
    )
    assert requirements_text("pallets/flask", files) == "six"


def test_a_missing_include_names_the_file(history):
    checkout, _ = history
    (checkout / "requirements").mkdir()
    (checkout / "requirements" / "dev.txt").write_text("-r missing.txt\n")
    with pytest.raises(InfraError, match="requirements/dev.txt includes requirements/missing.txt"):
        requirements_text("pallets/flask", SetupFiles(checkout))
