"""The oldest Python a project declares: pyproject's requires-python, setup.cfg's or setup.py's python_requires."""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_MIN_PYTHON = (3, 8)
_LOWER_BOUND = re.compile(r"(>=|~=|>|==)\s*3\.(\d+)")
_SETUP_PY = re.compile(r"python_requires\s*=\s*['\"]([^'\"]+)['\"]")


def min_python(root: Path) -> tuple[int, int]:
    """The oldest Python 3 the project declares (pyproject, setup.cfg, setup.py), else 3.8."""
    spec = _requires_python(root)
    if spec:
        bounds = [(op, int(minor)) for op, minor in _LOWER_BOUND.findall(spec)]
        if bounds:
            minor = min(m + (1 if op == ">" else 0) for op, m in bounds)
            return (3, minor)
    return DEFAULT_MIN_PYTHON


def _requires_python(root: Path) -> str | None:
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            spec = tomllib.loads(pyproject.read_text()).get("project", {}).get("requires-python")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            spec = None
        if spec:
            return spec
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(setup_cfg)
            spec = parser.get("options", "python_requires", fallback=None)
        except configparser.Error:
            spec = None
        if spec:
            return spec
    setup_py = root / "setup.py"
    if setup_py.is_file():
        match = _SETUP_PY.search(setup_py.read_text(errors="replace"))
        if match:
            return match.group(1)
    return None
