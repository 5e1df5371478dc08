"""A venv whose pip predates `--uploaded-prior-to` (Pythons before 3.9) still gets its named requirements as of
the date: scikit-learn 0.22's spec (Python 3.6) lists `cython` unpinned, today's Cython 3 does not compile it, and
every test of its instances failed at `import sklearn`."""

from __future__ import annotations

import pytest

from repoanchor.evals.harness.dependencies.dated_pins import resolve_as_of, top_level_requirements
from repoanchor.perturb.validation.compile_check import installed_interpreters
from tests.evals.test_release_date import BEFORE_050, ONLINE, _built, _installed, _would_install

SKLEARN_13 = {  # swebench 4.1.0's spec for scikit-learn 1.3, as it is
    "python": "3.9",
    "packages": "'numpy==1.19.2' 'scipy==1.5.2' 'cython==3.0.10' pytest 'pandas<2.0.0' 'matplotlib<3.9.0' "
    "setuptools pytest joblib threadpoolctl",
    "pip_packages": ["cython", "setuptools", "numpy", "scipy"],
}


def test_the_named_requirements_are_joined_by_project_and_a_pinned_project_is_left_to_its_pin():
    wanted, left = top_level_requirements(SKLEARN_13, [], "3.9.18")
    assert sorted(wanted) == ["joblib", "matplotlib<3.9.0", "pandas<2.0.0", "pytest", "setuptools", "threadpoolctl"]
    assert left == []


def test_a_wildcard_pin_is_a_range_and_is_dated_where_an_exact_pin_under_a_marker_is_not():
    spec = {"python": "3.9", "packages": "'numpy==1.*' 'scipy==1.5.2; python_version >= \"3.6\"' pytest"}
    wanted, left = top_level_requirements(spec, [], "3.9.18")
    assert wanted == ["numpy==1.*", "pytest"]  # the newest 1.x as of the date, not whatever 1.x is newest today
    assert left == []


def test_a_requirements_files_lines_join_the_specs_and_what_cannot_be_dated_says_why():
    spec = {"python": "3.6", "packages": "requirements.txt", "pip_packages": ["Jinja2<3", "six==1.16.0"]}
    lines = ["jinja2>=2.10", "Six", "x @ git+https://example.invalid/x.git", "git+https://example.invalid/y.git",
             "pylibmc; sys.platform != 'win32'",
             "docutils; python_version < '3.7'", "typing; python_version < '3.5'"]  # fmt: skip
    wanted, left = top_level_requirements(spec, lines, "3.6.15")
    # One requirement per project, its specifiers joined; six is pinned; a marker is read for this machine and
    # Python 3.6 (Django 3.0's tests/requirements/py3.txt: pylibmc and pywatchman where sys.platform != 'win32').
    assert wanted == ["Jinja2<3,>=2.10", "pylibmc", "docutils"]
    assert left == [
        "x @ git+https://example.invalid/x.git: a URL, left undated",
        "git+https://example.invalid/y.git: not a requirement pip can date here, left undated",
    ]


@ONLINE
def test_each_requirement_resolves_as_released_by_the_date_and_one_that_cannot_costs_only_itself():
    pins, left = resolve_as_of(["inflection", "inflection-no-such-project-xyz"], "3.8", BEFORE_050.when)
    assert pins == {"inflection": "0.4.0"}  # 0.5.0 came out after the date
    assert len(left) == 1
    assert left[0].startswith("inflection-no-such-project-xyz: not resolved as of 2020-05-01")


@ONLINE
@pytest.mark.skipif(not installed_interpreters([(3, 8)]), reason="needs Python 3.8 (pyenv or PATH)")
def test_a_python_38_venv_and_every_later_pip_run_in_it_keep_the_dated_versions(tmp_path):
    venv, record = _built(tmp_path, "acme/old38", ["inflection"], python="3.8")
    assert _installed(venv, "inflection") == "0.4.0"
    assert record["dependencies_as_of"] == BEFORE_050.when
    assert record["dated_pins"] == {"inflection": "0.4.0"}
    assert record["skipped"][0].startswith("dependencies as of 2020-05-01T00:00:00Z for the 1 requirement(s) named")
    assert _would_install(venv, "inflection") == "Would install inflection-0.4.0"  # a test run's install too
