"""The names a project publishes itself under, from its own metadata (pyproject, setup.cfg, setup.py, PKG-INFO).

A file whose header says it is a copy of a well-known module (six, versioneer) is vendored in any other
project, but in that module's own project it is the code itself: six's `six.py` is all of six.
"""

from __future__ import annotations

import re
from pathlib import Path

from repoanchor.perturb.source.metadata_files import first_match, pyproject, setup_cfg

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
