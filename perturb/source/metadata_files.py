"""Reading a project's own metadata files (pyproject.toml, setup.cfg, setup.py, PKG-INFO) leniently: a file that
is missing, undecodable or malformed answers nothing rather than failing the transform.

Also what they say: the oldest Python the project declares (pyproject's requires-python, setup.cfg's or setup.py's
python_requires), and the names it publishes itself under: a file whose header says it is a copy of a well-known
module (six, versioneer) is vendored in any other project, but in that module's own project it is the code itself:
six's `six.py` is all of six.
"""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def pyproject(root: Path) -> dict:
    """pyproject.toml's tables; {} when there is none or it does not parse."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def setup_cfg(root: Path, section: str, option: str) -> str | None:
    """An option of setup.cfg, if the file has it."""
    path = root / "setup.cfg"
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path)
        return parser.get(section, option, fallback=None)
    except configparser.Error:
        return None


def first_match(path: Path, pattern: re.Pattern) -> str | None:
    """The first group of `pattern`'s first match in a text file (setup.py, PKG-INFO), if any."""
    if not path.is_file():
        return None
    match = pattern.search(path.read_text(errors="replace"))
    return match.group(1) if match else None


_SETUP_PY_NAME = re.compile(r"""\bname\s*=\s*['"]([A-Za-z0-9][A-Za-z0-9._-]*)['"]""")
_PKG_INFO_NAME = re.compile(r"^Name:\s*(\S+)", re.MULTILINE)


def normalized(name: str) -> str:
    """PEP 503's normal form with `_` (an import name and its distribution compare equal: `more_itertools`)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def distribution_names(root: Path) -> frozenset[str]:
    """Every name the project's metadata files give it, normalized; empty when none says. Read on each call: it
    is asked only of a file whose header marks a copy, and a tree's metadata may change between calls."""
    tables = pyproject(root)
    found = [tables.get("project", {}).get("name"), tables.get("tool", {}).get("poetry", {}).get("name")]
    found += [setup_cfg(root, "metadata", "name"), first_match(root / "setup.py", _SETUP_PY_NAME)]
    found.append(first_match(root / "PKG-INFO", _PKG_INFO_NAME))
    return frozenset(normalized(name) for name in found if isinstance(name, str) and name)


def is_the_project_module(root: Path, relpath: str) -> bool:
    """Whether `relpath` is the project's own top-level module named after it (`six.py`, `src/six.py`)."""
    path = Path(relpath)
    top_level = path.parent in (Path(), Path("src"))
    return top_level and path.suffix == ".py" and normalized(path.stem) in distribution_names(root)


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
