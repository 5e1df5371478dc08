"""The oldest Python a project declares: pyproject's requires-python, setup.cfg's or setup.py's python_requires."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from repoanchor.perturb.source.metadata_files import first_match, pyproject, setup_cfg

DEFAULT_MIN_PYTHON = (3, 8)
NEWEST_MINOR = 14
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
        return oldest_python3(spec) or DEFAULT_MIN_PYTHON
    return DEFAULT_MIN_PYTHON


def oldest_python3(spec: str) -> tuple[int, int] | None:
    """The oldest Python 3 a specifier with no Python 3 lower bound allows, or None (none, or not a specifier).

    Projects that kept Python 2 declare ``>=2.7, !=3.0.*, !=3.1.*, !=3.2.*``: Python 3.3 and later, not the
    unknown a missing bound is (python-dateutil 2.9, requests 2.2x)."""
    try:
        allowed = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    for minor in range(NEWEST_MINOR + 1):
        if any(allowed.contains(f"3.{minor}.{micro}", prereleases=True) for micro in (0, 99)):
            return (3, minor)
    return None


def _requires_python(root: Path) -> str | None:
    spec = pyproject(root).get("project", {}).get("requires-python")
    return spec or setup_cfg(root, "options", "python_requires") or first_match(root / "setup.py", _SETUP_PY)
