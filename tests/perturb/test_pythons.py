"""min_python: the oldest Python 3 a project declares, Python-2-era specifiers included."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.source.metadata_files import DEFAULT_MIN_PYTHON, min_python

CASES = [
    (">=3.8", (3, 8)),
    (">=3.6.8", (3, 6)),
    (">3.6", (3, 7)),
    (">=3.7,<4", (3, 7)),
    (">=2.7, !=3.0.*, !=3.1.*, !=3.2.*", (3, 3)),  # python-dateutil 2.9
    (">=2.7, !=3.0.*, !=3.1.*, !=3.2.*, !=3.3.*", (3, 4)),
    (">=2.7", (3, 0)),
    ("~=2.7", DEFAULT_MIN_PYTHON),  # no Python 3 at all: unknown, as no declaration
    ("not a specifier", DEFAULT_MIN_PYTHON),
]


@pytest.mark.parametrize(("spec", "expected"), CASES)
@pytest.mark.parametrize("where", ["pyproject.toml", "setup.cfg", "setup.py"])
def test_the_declared_oldest_python3(tmp_path: Path, where: str, spec: str, expected: tuple[int, int]):
    text = {
        "pyproject.toml": f'[project]\nrequires-python = "{spec}"\n',
        "setup.cfg": f"[options]\npython_requires = {spec}\n",
        "setup.py": f'from setuptools import setup\nsetup(python_requires="{spec}")\n',
    }[where]
    (tmp_path / where).write_text(text)
    assert min_python(tmp_path) == expected


def test_no_declaration(tmp_path: Path):
    assert min_python(tmp_path) == DEFAULT_MIN_PYTHON
