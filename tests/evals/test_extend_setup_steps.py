"""The instance's pre-install steps run once per Extend checkout, its install step every time (setup_steps.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from repoanchor.evals.suites.extend.common import installed
from repoanchor.evals.suites.extend.models import FamiliesConfig

# Sphinx's spec pins a dependency with sed: run twice, it writes `applehelp<=1.0.7<=1.0.7` and the install fails.
PIN = "sed -i 's/applehelp/applehelp<=1.0.7/' setup.cfg"


def _tree(root: Path, git: bool) -> Path:
    root.mkdir()
    (root / "setup.cfg").write_text("install_requires = applehelp\n")
    if git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=root, check=True)
    return root


@pytest.mark.parametrize("git", [True, False])
def test_pre_install_steps_edit_a_tree_once_and_the_install_step_runs_every_time(tmp_path, git):
    settings = FamiliesConfig(pre_setup_cmd=PIN, setup_cmd=f"echo installed >> {tmp_path}/installs.log")
    tree = _tree(tmp_path / "variant", git)
    for _ in range(2):  # the baseline tests, then a probe
        with installed(tree, settings):
            pass
    assert (tree / "setup.cfg").read_text() == "install_requires = applehelp<=1.0.7\n"
    copy = tmp_path / "copy"
    shutil.copytree(tree, copy)  # carries the edit and the marker
    with installed(copy, settings):
        pass
    assert (copy / "setup.cfg").read_text() == "install_requires = applehelp<=1.0.7\n"
    assert (tmp_path / "installs.log").read_text() == "installed\n" * 3
    if git:  # a clone has neither the edit nor the marker: the steps run in it once
        subprocess.run(["git", "clone", "-q", str(tree), str(tmp_path / "clone")], check=True)
        for _ in range(2):
            with installed(tmp_path / "clone", settings):
                pass
        assert (tmp_path / "clone" / "setup.cfg").read_text() == "install_requires = applehelp<=1.0.7\n"
        assert subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True).stdout == (
            " M setup.cfg\n"  # the marker sits in .git, not among the tree's files
        )


def test_a_failing_install_step_still_fails_the_setup(tmp_path):
    settings = FamiliesConfig(pre_setup_cmd=PIN, setup_cmd="exit 3")
    from repoanchor.evals.suites.extend.common import ExtendError

    with pytest.raises(ExtendError, match="exit 3"), installed(_tree(tmp_path / "t", True), settings):
        pass
