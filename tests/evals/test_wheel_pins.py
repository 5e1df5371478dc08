"""A spec's exact pin that PyPI has no wheel of for the venv's Python (conda's channels had built it) moves to the
first later release of its series with one, and says so: scikit-learn 1.3's spec pins numpy 1.19.2 and scipy 1.5.2
on Python 3.9, and the venv build failed compiling numpy under Cython 3."""

from __future__ import annotations

import pytest
from packaging.version import Version

from repoanchor.evals.harness.dependencies.release_date import exact_pins
from repoanchor.evals.harness.dependencies.requirements_file import exact_pin
from repoanchor.evals.harness.dependencies.wheel_pins import repinned, with_wheels
from tests.evals.test_release_date import ONLINE

SKLEARN_13 = {  # swebench 4.1.0's spec for scikit-learn 1.3, its dependencies as they are
    "python": "3.9",
    "packages": "'numpy==1.19.2' 'scipy==1.5.2' 'cython==3.0.10' pytest 'pandas<2.0.0' 'matplotlib<3.9.0' "
    "setuptools pytest joblib threadpoolctl",
    "pip_packages": ["cython", "setuptools", "numpy", "scipy"],
}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("numpy==1.19.2", ("numpy", Version("1.19.2"))),
        ("numpy>=1.19", None),
        ("numpy==1.*", None),
        ("x y", None),
        ("numpy==1.19.2; python_version < '3.10'", ("numpy", Version("1.19.2"))),  # where the marker holds
        ("numpy[dev]===1.19.2", ("numpy", Version("1.19.2"))),
        ("numpy==1.19.2,<2", ("numpy", Version("1.19.2"))),
        ("numpy===local-build", None),  # no version to compare with a wheel's
    ],
)
def test_only_a_pin_to_one_version_is_an_exact_pin(text, found):
    assert exact_pin(text) == found


def test_a_specs_exact_pins_are_read_from_its_package_list_too():
    assert exact_pins(SKLEARN_13) == ["numpy==1.19.2", "scipy==1.5.2", "cython==3.0.10"]
    assert exact_pins({**SKLEARN_13, "packages": "requirements.txt", "pip_packages": ["tox==4.16.0"]}) == [
        "tox==4.16.0"
    ]


def test_a_marker_pin_is_an_exact_pin_the_spec_installs_first_and_a_wildcard_is_not():
    spec = {"packages": "requirements.txt", "pip_packages": ["tox==4.16.0; python_version >= '3.8'", "numpy==1.*"]}
    assert exact_pins(spec) == ["tox==4.16.0; python_version >= '3.8'"]


def test_a_moved_pin_keeps_its_extras_and_marker():
    moved = repinned("numpy[dev]==1.19.2; python_version < '3.10'", Version("1.19.3"))
    assert moved == 'numpy[dev]==1.19.3; python_version < "3.10"'


def test_a_wheel_check_the_index_does_not_answer_in_time_leaves_the_pins_as_written_and_says_so():
    spec, notes = with_wheels(SKLEARN_13, "3.9.18", timeout=0.001)  # a real pip, stopped before it can answer
    assert spec == SKLEARN_13
    assert notes == ["exact pins not checked for wheels for Python 3.9.18 (pip took over 0.001 s): left as written"]


@ONLINE
def test_pins_without_a_wheel_for_the_python_move_to_the_first_later_release_of_their_series():
    spec, notes = with_wheels(SKLEARN_13, "3.9.18")
    assert spec["packages"].split()[:3] == ["numpy==1.19.3", "scipy==1.5.4", "cython==3.0.10"]  # cython has one
    assert spec["packages"].split()[3:] == ["pytest", "'pandas<2.0.0'", "'matplotlib<3.9.0'", *"setuptools pytest "
                                            "joblib threadpoolctl".split()]  # fmt: skip
    assert spec["pip_packages"] == SKLEARN_13["pip_packages"]
    assert notes == [
        "numpy==1.19.2: no wheel for Python 3.9.18 on the index; numpy==1.19.3 instead (the first later 1.19 release"
        " with one: conda's channels had built the pinned one, PyPI's release did not)",
        "scipy==1.5.2: no wheel for Python 3.9.18 on the index; scipy==1.5.4 instead (the first later 1.5 release"
        " with one: conda's channels had built the pinned one, PyPI's release did not)",
    ]


@ONLINE
@pytest.mark.parametrize(
    ("spec", "python"),
    [
        ({"python": "3.6", "pip_packages": ["numpy==1.19.2", "scipy==1.5.2"]}, "3.6.15"),  # scikit-learn 0.22's: wheels
        ({"python": "3.13", "packages": "numpy==1.19.2"}, "3.13.0"),  # no 1.19 release has one: pip builds it or says
    ],
)
def test_a_pin_with_a_wheel_or_no_later_one_in_its_series_stays(spec, python):
    assert with_wheels(spec, python) == (spec, [])
