"""Run folders are named after their process, and the next run removes those whose process is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.environments.scratch import scratch_folder, scratch_prefix, sweep_orphans
from tests.support.trees import make_tree


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_folders_of_dead_processes_go_and_the_rest_stay(tmp_path: Path):
    dead = tmp_path / f"repoanchor-run-{_dead_pid()}-abc123_x"
    live = tmp_path / f"repoanchor-mini-{os.getpid()}-def456yz"
    foreign = [tmp_path / "repoanchor-run-notapid-abcdefgh", tmp_path / "repoanchor-tests-12345678", tmp_path / "other"]
    for folder in [dead, live, *foreign]:
        (folder / "repo").mkdir(parents=True)
    assert sweep_orphans(tmp_path) == [dead]
    assert not dead.exists()
    assert live.is_dir()
    assert all(folder.is_dir() for folder in foreign)


def test_a_folder_is_named_after_its_process():
    folder = scratch_folder("copy")
    try:
        assert folder.name.startswith(f"repoanchor-copy-{os.getpid()}-")
        assert sweep_orphans(folder.parent).count(folder) == 0  # this process is alive
    finally:
        folder.rmdir()
    with pytest.raises(ValueError, match="unknown scratch kind"):
        scratch_prefix("elsewhere")


def test_a_checkout_made_after_a_killed_run_removes_what_it_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A worker killed outright leaves its checkout; the next checkout on the machine sweeps it."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    repo = make_tree(tmp_path / "repo", {"calc.py": "x = 1\n"})
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    left = tmp_path / "tmp" / f"repoanchor-run-{_dead_pid()}-killed01"
    (left / "repo").mkdir(parents=True)
    with LocalCheckout(repo) as checkout:
        assert not left.exists()
        assert Path(checkout.workdir, "calc.py").is_file()
    assert list((tmp_path / "tmp").iterdir()) == []
