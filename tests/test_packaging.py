"""A wheel holds every folder of code: pyproject.toml lists the packages one by one (each design-card folder is
a sub-package of `repoanchor`), and a folder missing from that list installs from a checkout (the editable
install maps whole folders) yet is absent from a wheel, so `import` fails only for a researcher's `pip install`."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("prompts", "scaffolds", "anchor", "perturb", "evals")
DATA = ("evals/demo/fixture",)
"""Folders shipped as package data (the demo's project), not as packages."""


def code_folders() -> set[str]:
    found = set()
    for top in FOLDERS:
        for module in (ROOT / top).rglob("*.py"):
            folder = module.parent.relative_to(ROOT).as_posix()
            if not folder.startswith(DATA) and "__pycache__" not in folder:
                found.add("repoanchor." + folder.replace("/", "."))
    return found


def test_every_folder_of_code_is_a_listed_package():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    assert sorted(code_folders() - listed) == []
    assert sorted(listed - code_folders()) == []  # and nothing listed is gone
