"""A swebench spec whose dependencies are a conda `environment.yml` (xarray, matplotlib: 56 of SWE-bench
Verified's instances) gets them pip-installed under the spec's pins, each one pip cannot install skipped and
recorded, instead of none at all (xarray-7233's P2P test_coarsen_coords_cftime was skipped: no cftime)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess

import pytest

from repoanchor.evals.harness.dependencies.conda import environment_requirements, pip_requirement
from repoanchor.evals.harness.venv_build import build_venv, venv_key
from repoanchor.perturb.validation.compile_check import installed_interpreters

ENVIRONMENT = """name: xarray-tests
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - six  # pinned by the spec
  - toolz=0.12
  - conda-forge::no-such-package-for-repoanchor-tests
  - pip:
      - more-itertools==10.5.0
"""


@pytest.mark.parametrize(
    ("conda", "pip"),
    [
        ("numpy", "numpy"),
        ("numpy=1.23", "numpy==1.23.*"),
        ("numpy 1.23", "numpy==1.23.*"),
        ("pandas=1.5.3=py310_0", "pandas==1.5.3.*"),
        ("dask=2022.8.*", "dask==2022.8.*"),
        ("fsspec!=2021.7.0", "fsspec!=2021.7.0"),
        ("numpy>=1.20,<2", "numpy>=1.20,<2"),
        ("conda-forge::cftime", "cftime"),
        ("matplotlib-base", "matplotlib"),
        ("dask-core", "dask"),
        ("python=3.10", None),
        ("pip", None),
    ],
)
def test_a_conda_spec_becomes_a_pip_requirement(conda, pip):
    assert pip_requirement(conda) == pip


def test_an_environment_file_lists_its_conda_and_pip_requirements():
    assert environment_requirements(ENVIRONMENT) == [
        "six",
        "toolz==0.12.*",
        "no-such-package-for-repoanchor-tests",
        "more-itertools==10.5.0",
    ]


@pytest.mark.parametrize(
    ("packages", "kept"), [("environment.yml", False), ("requirements.txt", False), ("numpy pytest", True)]
)
def test_only_venvs_built_from_a_file_of_the_repository_get_a_new_key(packages, kept):
    """A venv cached before the environment file was installed, or built from files read at an instance's base
    commit rather than the environment setup commit, must not be reused; every other venv keeps its key."""
    spec = {"python": "3.11", "packages": packages}
    spec_only = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]
    assert venv_key("a/b", "1", spec).endswith(spec_only) == kept


@pytest.mark.skipif(os.environ.get("REPOANCHOR_OFFLINE") == "1", reason="REPOANCHOR_OFFLINE=1: installs from PyPI")
def test_the_environment_file_is_installed_under_the_pins_and_what_fails_is_recorded(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "ci" / "requirements").mkdir(parents=True)
    (checkout / "ci" / "requirements" / "environment.yml").write_text(ENVIRONMENT)
    spec = {"python": "3.11", "packages": "environment.yml", "pip_packages": ["six==1.16.0"]}
    venv, record = build_venv("pydata/xarray", "2022.06", spec, checkout, tmp_path / "venvs")
    probe = "import importlib.metadata as m; print(*(m.version(n) for n in ('six', 'toolz', 'more-itertools')))"
    versions = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True)
    six, toolz, more = versions.stdout.split()
    assert (six, more) == ("1.16.0", "10.5.0")
    assert toolz.startswith("0.12")
    (missing,) = [reason for reason in record["skipped"] if reason.startswith("environment.yml: ")]
    assert missing.startswith("environment.yml: no-such-package-for-repoanchor-tests: ")
    assert any("more-itertools==10.5.0" in step for step in record["steps"])


@pytest.mark.skipif(os.environ.get("REPOANCHOR_OFFLINE") == "1", reason="REPOANCHOR_OFFLINE=1: installs from PyPI")
@pytest.mark.skipif(not installed_interpreters([(3, 6)]), reason="no Python 3.6 here (pyenv or PATH)")
def test_an_old_interpreters_venv_gets_a_pip_that_picks_releases_it_can_install(tmp_path):
    """pydicom 1.3's spec (Python 3.6) asks for an unpinned pytest: the venv's own pip 18.1 took pytest 9 from
    the find-links folder and failed on its Requires-Python; the resolver's pip installs the last pytest for 3.6."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    spec = {"python": "3.6", "pip_packages": ["pytest"]}
    venv, record = build_venv("pydicom/pydicom", "1.3", spec, checkout, tmp_path / "venvs")
    assert record["steps"][0] == "python -m pip install --upgrade 'pip<22'"
    probe = "import pytest, pip; print(pytest.__version__, pip.__version__)"
    found = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=True)
    pytest_version, pip_version = found.stdout.split()
    assert pytest_version.startswith("7.0."), pytest_version
    assert pip_version.startswith("21."), pip_version


@pytest.mark.skipif(os.environ.get("REPOANCHOR_OFFLINE") == "1", reason="REPOANCHOR_OFFLINE=1: installs from PyPI")
def test_a_requirements_file_with_a_package_gone_from_pypi_installs_the_rest_and_records_it(tmp_path):
    """sqlfluff 1.4's requirements_dev.txt lists types-pkg_resources, since yanked from PyPI: the whole file failed
    to install and the instance was rejected before any test ran."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "requirements_dev.txt").write_text(
        "# testing\nsix==1.16.0  # pinned\nno-such-package-for-repoanchor-tests\n-e .\nmore-itertools==10.5.0\n"
    )
    spec = {"python": "3.11", "packages": "requirements.txt"}
    venv, record = build_venv("sqlfluff/sqlfluff", "1.4", spec, checkout, tmp_path / "venvs")
    probe = "import importlib.metadata as m; print(m.version('six'), m.version('more-itertools'))"
    found = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.split() == ["1.16.0", "10.5.0"]
    (missing,) = record["skipped"]
    assert missing.startswith("requirements.txt: no-such-package-for-repoanchor-tests: ")
    assert [step.split()[-1] for step in record["steps"]] == ["'pip'", "'six==1.16.0'", "'more-itertools==10.5.0'"]


def test_a_pip_upgrade_that_cannot_be_had_is_recorded_and_the_bundled_pip_goes_on(tmp_path, monkeypatch):
    """An index without pip (here: no index at all) must not cost the venv: the record names the step and why."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FORCE_REINSTALL", "1")  # else "already satisfied" passes without an index
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    venv, record = build_venv("acme/widgets", "1.0", {"python": "3.11"}, checkout, tmp_path / "venvs")
    assert record["steps"] == []
    (skipped,) = record["skipped"]
    assert skipped.startswith("python -m pip install --upgrade 'pip': ")
    assert (venv / "bin" / "python").exists()
