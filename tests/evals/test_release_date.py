"""A spec's unpinned dependencies resolve as released when the instance's environment was current: pvlib 0.8's venv
got NumPy 2 (no `np.Inf`) and every test of pvlib-python-1154 failed at `import pvlib`, the original's included."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from repoanchor.evals.harness.dependencies.pip_steps import command_env
from repoanchor.evals.harness.dependencies.release_date import (
    ROW_FIELD,
    TODAY,
    VARIABLE,
    ReleaseDate,
    bound_venv,
    pip_version,
    release_date,
)
from repoanchor.evals.harness.venv_build import build_venv, venv_key

ONLINE = pytest.mark.skipif(os.environ.get("REPOANCHOR_OFFLINE") == "1", reason="REPOANCHOR_OFFLINE=1: uses PyPI")
# inflection on PyPI: 0.3.1 (2015-05-03), 0.4.0 (2020-04-06), 0.5.0 (2020-06-06), 0.5.1 (2020-08-22); none since.
BEFORE_050 = ReleaseDate("2020-05-01T00:00:00Z", "a test's date")


def _dated_repo(repo, committed: str) -> str:
    """A repository at `repo` whose one commit has committer date `committed`; returns the commit."""
    repo.mkdir()
    dated = {**os.environ, "GIT_COMMITTER_DATE": committed, "GIT_AUTHOR_DATE": "2001-01-01T00:00:00"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "env"], cwd=repo, check=True, env=dated)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
    return head.stdout.strip()


@pytest.fixture
def clone(tmp_path, monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    return tmp_path / "repo", _dated_repo(tmp_path / "repo", "2023-03-17T20:08:34-04:00")


def test_the_date_is_the_environment_setup_commits_committer_date_in_utc(clone):
    repo, commit = clone
    date = release_date({"environment_setup_commit": commit}, repo)
    assert date.when == "2023-03-18T00:08:34Z"
    assert commit[:12] in date.source


@pytest.mark.parametrize(
    ("python", "when", "floor"),
    [
        ("3.9", "2023-03-18T00:08:34Z", False),  # Python 3.9 had been out for years: the commit's date
        ("3.11", "2023-04-25T00:00:00Z", True),  # 2022-10-24 + 183 days: later than the commit
        ("3.12", "2024-04-02T00:00:00Z", True),  # the commit predates Python 3.12: no wheels for it yet
        ("2.7", "2023-03-18T00:08:34Z", False),  # no floor for a Python not listed
    ],
)
def test_the_date_is_never_before_the_specs_python_had_settled(clone, python, when, floor):
    repo, commit = clone
    date = release_date({"environment_setup_commit": commit}, repo, {"python": python})
    assert date.when == when
    assert date.source.startswith(f"Python {python} released + 183 days") == floor


@pytest.mark.parametrize(
    ("install", "when", "python"),
    [
        ("python -m pip install -e .[test]", "2022-08-12T00:00:00Z", "3.9"),
        ("pip install --editable .", "2022-08-12T00:00:00Z", "3.9"),
        ("python -m pip install .", "2021-04-06T00:00:00Z", "3.9"),
        ("python setup.py develop", "2021-04-06T00:00:00Z", "3.9"),
        ("pip3 install -e .", "2022-08-12T00:00:00Z", "3.9"),
        ("pip install . && bash -e run.sh", "2021-04-06T00:00:00Z", "3.9"),
        ("pip install -e .", "2019-01-01T00:00:00Z", "3.6"),  # pip 21 installs it by `setup.py develop`
        ("pip install -e .", "2020-04-14T00:00:00Z", "3.8"),  # Python 3.8's settling, not setuptools 64
    ],
)
def test_an_editable_install_needs_setuptools_64s_date(tmp_path, monkeypatch, install, when, python):
    """pip 26 installs editable only through PEP 660's hooks, which setuptools has from 64 (2022-08-11): sphinx 5.0's
    venv, dated 2022-06, could not install the project ("missing the 'build_editable' hook"). The pip of a Python
    before 3.9 does not need them: scikit-learn 0.22's venv (3.6), dated 2022, had got pandas and pytest of 2022."""
    monkeypatch.delenv(VARIABLE, raising=False)
    repo = tmp_path / "repo"
    commit = _dated_repo(repo, "2019-01-01T00:00:00Z")
    date = release_date({"environment_setup_commit": commit}, repo, {"python": python, "install": install})
    assert date.when == when


def test_a_conda_environment_file_spec_is_not_dated(clone):
    """xarray 2022.09's environment file, dated, got eccodes 1.5 (it needs a system ecCodes library; conda's brings
    one, today's wheel bundles one): 189 of its tests failed at collection, the original's too."""
    repo, commit = clone
    date = release_date({"environment_setup_commit": commit}, repo, {"python": "3.10", "packages": "environment.yml"})
    assert date.when is None
    assert "conda packages" in date.source


@pytest.mark.parametrize(
    ("row", "reason"),
    [({}, "no environment_setup_commit"), ({"environment_setup_commit": "0" * 40}, "is not in the clone")],
)
def test_without_the_commit_there_is_no_date_and_the_source_says_why(clone, row, reason):
    date = release_date(row, clone[0])
    assert date.when is None
    assert reason in date.source


@pytest.mark.parametrize(
    ("chosen", "when"),
    [
        ("none", None),
        ("NONE", None),
        ("2021-06-01", "2021-06-01T00:00:00Z"),
        ("2021-06-01T02:00:00+02:00", "2021-06-01T00:00:00Z"),
    ],
)
def test_the_variable_overrides_the_commit(clone, monkeypatch, chosen, when):
    repo, commit = clone
    monkeypatch.setenv(VARIABLE, chosen)
    date = release_date({"environment_setup_commit": commit}, repo)
    assert date.when == when
    assert VARIABLE in date.source


@pytest.mark.parametrize(("recorded", "when"), [("2023-03-18T00:08:34Z", "2023-03-18T00:08:34Z"), ("none", None)])
def test_a_suites_task_keeps_the_date_its_instance_was_built_with(clone, recorded, when):
    """A task's grading row names its own commit (dated 2024-01-01, like every variant's) as its environment
    commit: the date recorded at the build decides, so the grade gets the venv the build validated with."""
    repo, commit = clone
    row = {"environment_setup_commit": commit, ROW_FIELD: recorded}
    date = release_date(row, repo, {"python": "3.9", "install": "pip install -e ."})
    assert date.when == when
    assert ROW_FIELD in date.source


def test_the_variable_wins_over_a_recorded_date(clone, monkeypatch):
    monkeypatch.setenv(VARIABLE, "none")
    assert release_date({ROW_FIELD: "2023-03-18"}, clone[0]).when is None


def test_a_date_that_is_not_one_is_refused_naming_the_variable(clone, monkeypatch):
    monkeypatch.setenv(VARIABLE, "last spring")
    with pytest.raises(ValueError, match=f"{VARIABLE}: 'last spring' is not an ISO date"):
        release_date({}, clone[0])


def test_a_venv_resolved_under_another_date_is_another_venv():
    spec = {"python": "3.11", "packages": "numpy"}
    keys = {
        venv_key("a/b", "1", spec),
        venv_key("a/b", "1", spec, "2020-01-01T00:00:00Z"),
        venv_key("a/b", "1", spec, "2021-01-01T00:00:00Z"),
    }
    assert len(keys) == 3


def test_a_pip_without_the_option_is_recorded_and_given_no_date(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)  # its bundled pip
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pip<26"], check=True,
                   capture_output=True, env=command_env(venv))  # fmt: skip
    reason = bound_venv(venv, BEFORE_050)
    assert pip_version(venv) < (26, 0)
    assert reason.startswith("dependencies as of 2020-05-01T00:00:00Z not applied: the venv's pip 2")
    assert not (venv / "pip.conf").exists()


def _installed(venv, name: str) -> str:
    probe = f"import importlib.metadata as m; print(m.version({name!r}))"
    return subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()


def _built(tmp_path, repo: str, pip_packages: list[str], date: ReleaseDate = BEFORE_050, python: str = "3.11"):
    """`build_venv` of a spec installing `pip_packages` on `python`, from an empty checkout."""
    checkout = tmp_path / "checkout"
    checkout.mkdir(exist_ok=True)
    spec = {"python": python, "pip_packages": pip_packages}
    return build_venv(repo, "1.0", spec, checkout, tmp_path / "venvs", date)


def _would_install(venv, requirement: str) -> str:
    """What a later pip run in the venv (a test run's project install) resolves `requirement` to."""
    command = [str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run", "--ignore-installed", requirement]
    proc = subprocess.run(command, capture_output=True, text=True, env=command_env(venv), check=True)
    return proc.stdout.strip().splitlines()[-1]


@ONLINE
def test_the_build_and_every_later_pip_run_in_the_venv_resolve_under_the_date(tmp_path):
    venv, record = _built(tmp_path, "acme/old", ["inflection"])
    assert _installed(venv, "inflection") == "0.4.0"
    assert record["dependencies_as_of"] == "2020-05-01T00:00:00Z"
    assert _would_install(venv, "inflection") == "Would install inflection-0.4.0"
    today, _ = _built(tmp_path, "acme/old", ["inflection"], TODAY)
    assert today != venv
    assert _installed(today, "inflection") == "0.5.1"


@ONLINE
def test_a_build_that_fails_under_the_date_is_made_with_todays_releases_and_says_so(tmp_path):
    venv, record = _built(tmp_path, "acme/new", ["inflection>=0.5"])  # nothing released before the date meets it
    assert _installed(venv, "inflection") == "0.5.1"
    assert record["dependencies_as_of"] is None
    assert record["skipped"][0].startswith("dependencies as of 2020-05-01T00:00:00Z failed, today's releases instead")
    assert not (venv / "pip.conf").exists()


@ONLINE
def test_a_specs_exact_pin_is_installed_whatever_its_date_and_the_rest_stays_bound(tmp_path):
    """sphinx 5.0's spec pins tox 4.16.0 (2024) beside 2022's packages: under the date that pin had no release,
    and the whole venv fell back to today's releases."""
    venv, record = _built(tmp_path, "acme/pinned", ["inflection==0.5.1"])
    assert _installed(venv, "inflection") == "0.5.1"
    assert record["dependencies_as_of"] == "2020-05-01T00:00:00Z"
    assert not any(reason.startswith("dependencies as of") for reason in record["skipped"])
    assert _would_install(venv, "inflection<0.5.1") == "Would install inflection-0.4.0"
