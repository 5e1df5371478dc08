"""A spec's editable install of a setuptools project leaves the checkout on sys.path, as `setup.py develop` did:
pip 26's import-hook editable install hid pylint's own files from its plugin loader (pylint-dev-7080's original
failed 116 PASS_TO_PASS tests)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from repoanchor.evals.harness.dependencies.editable import COMPAT, compat_editable
from repoanchor.evals.harness.dependencies.pip_steps import command_env

ONLINE = pytest.mark.skipif(os.environ.get("REPOANCHOR_OFFLINE") == "1", reason="REPOANCHOR_OFFLINE=1: uses PyPI")
SETUPTOOLS = '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'


@pytest.mark.parametrize(
    ("install", "pyproject", "pip", "expected"),
    [
        ("python -m pip install -e .", SETUPTOOLS, (26, 0), f"python -m pip install {COMPAT} -e ."),
        ("python -m pip install -e .[test]", None, (26, 0), f"python -m pip install {COMPAT} -e .[test]"),
        ("pip install --editable=. && make", None, (26, 0), f"pip install {COMPAT} --editable=. && make"),
        ("python -m pip install .", None, (26, 0), "python -m pip install ."),
        ("pip install -v --no-use-pep517 --no-build-isolation -e .", None, (26, 0), None),
        ("python -m pip install -e .", None, (21, 3), None),
        ("python -m pip install -e .", '[build-system]\nbuild-backend = "mesonpy"\n', (26, 0), None),
        ("python setup.py develop", None, (26, 0), None),
        ("pip3 install -e .", None, (26, 0), f"pip3 install {COMPAT} -e ."),
        (
            "pip3.9 install -q -e . ; pip install -e ../other",
            None,
            (26, 0),
            f"pip3.9 install {COMPAT} -q -e . ; pip install {COMPAT} -e ../other",
        ),
        ("pip install . && bash -e run.sh", None, (26, 0), None),
    ],
)
def test_only_a_setuptools_projects_editable_pip_install_changes(tmp_path, install, pyproject, pip, expected):
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    assert compat_editable(install, tmp_path, pip) == (install if expected is None else expected)


@ONLINE
def test_the_compat_install_puts_the_checkout_on_sys_path(tmp_path):
    """A flat layout beside folders setuptools leaves out (tests/) gets the import-hook install by default."""
    project = tmp_path / "project"
    for folder in ("widget", "tests"):
        (project / folder).mkdir(parents=True)
        (project / folder / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(SETUPTOOLS + '[project]\nname = "widget"\nversion = "1"\n'
                                            '[tool.setuptools]\npackages = ["widget"]\n')  # fmt: skip
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = str(venv / "bin" / "python")
    env = command_env(venv)
    subprocess.run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True, env=env, capture_output=True)
    pip = tuple(int(n) for n in subprocess.run([python, "-c", "import pip; print(pip.__version__)"],
                capture_output=True, text=True).stdout.split(".")[:2])  # fmt: skip
    probe = [python, "-c", f"import sys; print({str(project)!r} in sys.path)"]
    for install, on_path in ((f"{python} -m pip install -q -e .", "False"),
                             (compat_editable(f"{python} -m pip install -q -e .", project, pip), "True")):  # fmt: skip
        subprocess.run(["bash", "-c", install], cwd=project, check=True, env=env, capture_output=True)
        assert subprocess.run(probe, cwd=tmp_path, capture_output=True, text=True).stdout.strip() == on_path, install
