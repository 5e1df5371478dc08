"""The names a project publishes itself under, from its own metadata (pyproject, setup.cfg, setup.py, PKG-INFO).

A file whose header says it is a copy of a well-known module (six, versioneer) is vendored in any other
project, but in that module's own project it is the code itself: six's `six.py` is all of six.
"""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

_SETUP_PY_NAME = re.compile(r"""\bname\s*=\s*['"]([A-Za-z0-9][A-Za-z0-9._-]*)['"]""")
_PKG_INFO_NAME = re.compile(r"^Name:\s*(\S+)", re.MULTILINE)


def normalized(name: str) -> str:
    """PEP 503's normal form with `_` (an import name and its distribution compare equal: `more_itertools`)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def distribution_names(root: Path) -> frozenset[str]:
    """Every name the project's metadata files give it, normalized; empty when none says. Read on each call: it
    is asked only of a file whose header marks a copy, and a tree's metadata may change between calls."""
    found = [_pyproject(root / "pyproject.toml"), _setup_cfg(root / "setup.cfg")]
    found += [_first(_SETUP_PY_NAME, root / "setup.py"), _first(_PKG_INFO_NAME, root / "PKG-INFO")]
    return frozenset(normalized(name) for name in found if name)


def is_the_project_module(root: Path, relpath: str) -> bool:
    """Whether `relpath` is the project's own top-level module named after it (`six.py`, `src/six.py`)."""
    path = Path(relpath)
    top_level = path.parent in (Path(), Path("src"))
    return top_level and path.suffix == ".py" and normalized(path.stem) in distribution_names(root)


def _pyproject(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(errors="replace"))
    except tomllib.TOMLDecodeError:
        return None
    name = data.get("project", {}).get("name") or data.get("tool", {}).get("poetry", {}).get("name")
    return name if isinstance(name, str) else None


def _setup_cfg(path: Path) -> str | None:
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path)
        return parser.get("metadata", "name", fallback=None)
    except configparser.Error:
        return None


def _first(pattern: re.Pattern, path: Path) -> str | None:
    if not path.is_file():
        return None
    match = pattern.search(path.read_text(errors="replace"))
    return match.group(1) if match else None
