"""An editable install of a setuptools project puts the checkout on sys.path, as `setup.py develop` did.

pip 26 with setuptools 64 or later makes `pip install -e .` of a flat-layout project an import-hook install
(`__editable___<name>_finder.py`): `import pylint` works, but the checkout is on no sys.path entry, and tools that
map files to modules through sys.path fail. pylint's own plugin loader (astroid's `modpath_from_file`) then cannot
load its checkers: pylint-dev-7080's original failed 116 PASS_TO_PASS tests ("No such message id or symbol
'c-extension-no-member'") where the environments SWE-bench validated it in had the checkout on sys.path. So the
spec's editable pip install of a setuptools project gets `--config-settings editable_mode=compat` (a .pth naming
the checkout). Not where pip predates config settings (22.1), nor with `--no-use-pep517` (setup.py develop itself),
nor for another build backend (meson-python refuses settings it does not know).
"""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

COMPAT = "--config-settings editable_mode=compat"
FIRST_PIP = (22, 1)
"""The first pip with `--config-settings`."""
SETUPTOOLS = {"setuptools.build_meta", "setuptools.build_meta:__legacy__"}
EDITABLE_PIP_INSTALL = re.compile(r"\bpip(?:3(?:\.\d+)?)?\s+install\b(?=[^\n;&|]*\s(?:-e|--editable)(?:\s|=))")
"""A pip install (pip, pip3, pip3.X, python -m pip) whose command, up to the next shell operator, is editable."""


def installs_editable(install: str | None) -> bool:
    """Whether a spec's install command holds an editable pip install."""
    return bool(install and EDITABLE_PIP_INSTALL.search(install))


def compat_editable(install: str | None, checkout: Path, pip: tuple[int, ...]) -> str | None:
    """`install` with its editable pip installs in compat mode, where that applies (see the module's docstring)."""
    if not install or "--no-use-pep517" in install or "editable_mode" in install or pip < FIRST_PIP:
        return install
    if not setuptools_backend(checkout):
        return install
    return EDITABLE_PIP_INSTALL.sub(lambda found: f"{found.group(0)} {COMPAT}", install)


def setuptools_backend(checkout: Path) -> bool:
    """Whether the project at `checkout` builds with setuptools (pip's default without a build-system table)."""
    pyproject = checkout / "pyproject.toml"
    if not pyproject.is_file():
        return True
    try:
        system = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("build-system", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return False
    return system.get("build-backend", "setuptools.build_meta:__legacy__") in SETUPTOOLS
