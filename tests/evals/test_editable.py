"""A spec's editable install of a setuptools project leaves the checkout on sys.path, as `setup.py develop` did:
pip 26's import-hook editable install hid pylint's own files from its plugin loader (pylint-dev-7080's original
failed 116 PASS_TO_PASS tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.evals.harness.dependencies.editable import COMPAT, compat_editable, editable_install
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


PRE_PEP660 = (
    '[build-system]\nrequires = ["setuptools~=62.6", "wheel~=0.37.1"]\nbuild-backend = "setuptools.build_meta"\n'
)
SKLEARN = "python -m pip install -v --no-use-pep517 --no-build-isolation -e ."


@pytest.mark.parametrize(
    ("install", "pyproject", "pip", "expected"),
    [
        # astroid 2.14: its build requirements pin a setuptools without PEP 660's hooks
        ("python -m pip install -e .", PRE_PEP660, (26, 0),
         "python -m pip install 'setuptools>=64' 'wheel~=0.37.1' && "
         f"python -m pip install {COMPAT} --no-build-isolation -e ."),
        ("python -m pip install -e .", PRE_PEP660, (25, 2), f"python -m pip install {COMPAT} -e ."),
        # scikit-learn 1.3-1.6: --no-use-pep517 is gone; without isolation the venv's setuptools builds it
        (SKLEARN, None, (26, 0), f"python -m pip install 'setuptools>=64' wheel && python -m pip install {COMPAT} "
                                 "-v --no-build-isolation -e ."),
        (SKLEARN, None, (24, 0), SKLEARN),
        ("python -m pip install -e .", SETUPTOOLS, (26, 0), f"python -m pip install {COMPAT} -e ."),
        ("python -m pip install .", PRE_PEP660, (26, 0), "python -m pip install ."),
        ("python -m pip install -e .", '[build-system]\nbuild-backend = "mesonpy"\n', (26, 0), None),
    ],
)  # fmt: skip
def test_an_editable_install_is_adapted_to_a_pip_without_setup_py_develop(tmp_path, install, pyproject, pip, expected):
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    assert editable_install(install, tmp_path, pip) == (install if expected is None else expected)


def _venv_with_new_pip(tmp_path) -> tuple[str, dict, tuple[int, ...]]:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = str(venv / "bin" / "python")
    env = command_env(venv)
    subprocess.run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True, env=env, capture_output=True)
    pip = tuple(int(n) for n in subprocess.run([python, "-c", "import pip; print(pip.__version__)"],
                capture_output=True, text=True).stdout.split(".")[:2])  # fmt: skip
    return python, env, pip


@ONLINE
def test_a_project_pinning_an_old_setuptools_installs_editable_with_todays_pip(tmp_path):
    """astroid 2.14's build requirements (setuptools~=62.6) fail under pip >= 25.3 ("missing the
    'build_editable' hook"); adapted, the install succeeds and leaves the checkout on sys.path."""
    project = tmp_path / "project"
    (project / "widget").mkdir(parents=True)
    (project / "widget" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(PRE_PEP660 + '[project]\nname = "widget"\nversion = "1"\n')
    python, env, pip = _venv_with_new_pip(tmp_path)
    assert pip >= (25, 3)
    plain = subprocess.run(["bash", "-c", "python -m pip install -e ."], cwd=project, env=env, capture_output=True,
                           text=True)  # fmt: skip
    assert plain.returncode != 0
    assert "build_editable" in plain.stdout + plain.stderr
    adapted = editable_install("python -m pip install -e .", project, pip)
    subprocess.run(["bash", "-c", adapted], cwd=project, check=True, env=env, capture_output=True)
    probe = [python, "-c", f"import sys, widget; print({str(project)!r} in sys.path)"]
    assert subprocess.run(probe, cwd=tmp_path, capture_output=True, text=True).stdout.strip() == "True"


@ONLINE
def test_the_compat_install_puts_the_checkout_on_sys_path(tmp_path):
    """A flat layout beside folders setuptools leaves out (tests/) gets the import-hook install by default."""
    project = tmp_path / "project"
    for folder in ("widget", "tests"):
        (project / folder).mkdir(parents=True)
        (project / folder / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(SETUPTOOLS + '[project]\nname = "widget"\nversion = "1"\n'
                                            '[tool.setuptools]\npackages = ["widget"]\n')  # fmt: skip
    python, env, pip = _venv_with_new_pip(tmp_path)
    probe = [python, "-c", f"import sys; print({str(project)!r} in sys.path)"]
    for install, on_path in ((f"{python} -m pip install -q -e .", "False"),
                             (compat_editable(f"{python} -m pip install -q -e .", project, pip), "True")):  # fmt: skip
        subprocess.run(["bash", "-c", install], cwd=project, check=True, env=env, capture_output=True)
        assert subprocess.run(probe, cwd=tmp_path, capture_output=True, text=True).stdout.strip() == on_path, install


@ONLINE
def test_an_install_without_build_isolation_works_in_a_venv_without_wheel(tmp_path):
    """scikit-learn 1.3's venv (dated 2023: setuptools 68) failed its editable install, "invalid command
    'bdist_wheel'": setuptools before 70.1 needs the `wheel` package, which conda environments have and venvs not."""
    project = tmp_path / "project"
    (project / "widget").mkdir(parents=True)
    (project / "widget" / "__init__.py").write_text("")
    (project / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='widget', version='1', packages=['widget'])\n"
    )
    python, env, pip = _venv_with_new_pip(tmp_path)
    venv = Path(python).parent.parent
    subprocess.run([python, "-m", "pip", "uninstall", "-q", "-y", "wheel"], env=env, capture_output=True)
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "setuptools==68.0.0"], check=True, env=env, capture_output=True
    )
    (venv / "pip.conf").write_text("[global]\nuploaded-prior-to = 2023-06-30T00:00:00Z\n")  # as a dated venv's
    plain = SKLEARN.replace(" --no-use-pep517", "")
    failed = subprocess.run(["bash", "-c", plain], cwd=project, env=env, capture_output=True, text=True)
    assert failed.returncode != 0
    assert "invalid command 'bdist_wheel'" in failed.stdout + failed.stderr
    adapted = editable_install(SKLEARN, project, pip)
    done = subprocess.run(["bash", "-c", adapted], cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    probe = [python, "-c", "import widget; print(widget.__file__)"]
    assert subprocess.run(probe, cwd=tmp_path, capture_output=True, text=True).stdout.strip() == str(
        project / "widget" / "__init__.py"
    )
