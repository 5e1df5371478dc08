"""A spec's editable install, adapted to the venv's pip: on sys.path as `setup.py develop` had it, and possible
where pip no longer has `setup.py develop` at all.

pip 26 with setuptools 64 or later makes `pip install -e .` of a flat-layout project an import-hook install
(`__editable___<name>_finder.py`): `import pylint` works, but the checkout is on no sys.path entry, and tools that
map files to modules through sys.path fail. pylint's own plugin loader (astroid's `modpath_from_file`) then cannot
load its checkers: pylint-dev-7080's original failed 116 PASS_TO_PASS tests ("No such message id or symbol
'c-extension-no-member'") where the environments SWE-bench validated it in had the checkout on sys.path. So the
spec's editable pip install of a setuptools project gets `--config-settings editable_mode=compat` (a .pth naming
the checkout). Not where pip predates config settings (22.1), nor for another build backend (meson-python refuses
settings it does not know).

pip 25.3 removed `setup.py develop` and `--no-use-pep517`, both of which the environments SWE-bench validated in
had: an editable install needs setuptools 64 in its build environment. So, from pip 25.3 on, `--no-use-pep517` is
dropped (scikit-learn's specs: "no such option"); a project whose build requirements pin an older setuptools
(astroid 2.14: `setuptools~=62.6`, "missing the 'build_editable' hook") is built without isolation, on its build
requirements with setuptools raised to 64, installed first into the venv; and an install without build isolation
gets setuptools 64 and `wheel` in the venv first (a Python 3.9 venv brings setuptools 58, and no `wheel`).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from repoanchor.evals.harness.dependencies.build_system import (
    PEP660_SETUPTOOLS,
    build_requires,
    pins_pre_pep660_setuptools,
    setuptools_backend,
    with_pep660_setuptools,
)

COMPAT = "--config-settings editable_mode=compat"
FIRST_PIP = (22, 1)
"""The first pip with `--config-settings`."""
NO_DEVELOP_PIP = (25, 3)
"""The first pip without `setup.py develop` and `--no-use-pep517`."""
EDITABLE_PIP_INSTALL = re.compile(r"\bpip(?:3(?:\.\d+)?)?\s+install\b(?=[^\n;&|]*\s(?:-e|--editable)(?:\s|=))")
"""A pip install (pip, pip3, pip3.X, python -m pip) whose command, up to the next shell operator, is editable."""
NO_USE_PEP517 = re.compile(r"[ \t]+--no-use-pep517\b")


def installs_editable(install: str | None) -> bool:
    """Whether a spec's install command holds an editable pip install."""
    return bool(install and EDITABLE_PIP_INSTALL.search(install))


def editable_install(install: str | None, checkout: Path, pip: tuple[int, ...]) -> str | None:
    """`install` adapted to the venv's pip (see the module's docstring); unchanged where nothing applies."""
    if not installs_editable(install) or not setuptools_backend(checkout):
        return install
    if pip >= NO_DEVELOP_PIP:
        install = _without_develop(install, checkout)
    return compat_editable(install, checkout, pip)


def compat_editable(install: str | None, checkout: Path, pip: tuple[int, ...]) -> str | None:
    """`install` with its editable pip installs in compat mode, where that applies (see the module's docstring)."""
    if not install or "--no-use-pep517" in install or "editable_mode" in install or pip < FIRST_PIP:
        return install
    if not setuptools_backend(checkout):
        return install
    return EDITABLE_PIP_INSTALL.sub(lambda found: f"{found.group(0)} {COMPAT}", install)


def _without_develop(install: str, checkout: Path) -> str:
    """An editable install that needs no `setup.py develop`, for pip 25.3 and later."""
    install = NO_USE_PEP517.sub("", install)
    requires = build_requires(checkout)
    if "--no-build-isolation" in install:
        # setuptools before 70.1 builds an editable wheel with the `wheel` package, which a conda environment
        # always has and a venv does not (scikit-learn 1.3: "invalid command 'bdist_wheel'").
        first = [PEP660_SETUPTOOLS, "wheel"]
    elif pins_pre_pep660_setuptools(requires):
        first = with_pep660_setuptools(requires)
        install = EDITABLE_PIP_INSTALL.sub(lambda found: f"{found.group(0)} --no-build-isolation", install)
    else:
        return install
    return f"python -m pip install {shlex.join(first)} && {install}"
