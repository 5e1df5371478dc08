"""A conda environment's packages as pip requirements: SWE-bench's specs describe conda environments, and the
venvs here are built with pip."""

from __future__ import annotations

import re

import yaml

CONDA_ONLY = {"python", "pip"}
PYPI_NAMES = {
    "matplotlib-base": "matplotlib", "dask-core": "dask", "iris": "scitools-iris", "pytorch": "torch",
    "pytables": "tables", "msgpack-python": "msgpack",
}  # fmt: skip
_CONDA_SPEC = re.compile(r"^(?:[\w.-]+::)?([A-Za-z0-9_.-]+)\s*(.*)$")


def pip_requirement(conda: str) -> str | None:
    """A pip requirement for one conda spec (``numpy=1.23`` and ``numpy 1.23`` -> ``numpy==1.23.*``, as conda
    matches them; ``>=``/``<`` kept; a channel prefix and a build string dropped), None for what the venv itself
    provides (python, pip)."""
    match = _CONDA_SPEC.match(conda.strip())
    if not match:
        return None
    name = PYPI_NAMES.get(match.group(1).lower(), match.group(1))
    if name.lower() in CONDA_ONLY:
        return None
    rest = match.group(2).split()[0] if match.group(2).strip() else ""
    if rest.startswith(("==", ">", "<", "!", "~")):
        return f"{name}{rest}"
    version = rest.lstrip("=").split("=")[0]
    if not version:
        return name
    return f"{name}=={version}" if "*" in version else f"{name}=={version}.*"


def environment_requirements(text: str) -> list[str]:
    """pip requirements for a conda environment file: its conda specs converted, its `pip:` list as given."""
    found = []
    for entry in (yaml.safe_load(text) or {}).get("dependencies") or []:
        if isinstance(entry, dict):
            found.extend(str(item) for item in entry.get("pip") or [])
        elif (requirement := pip_requirement(str(entry))) is not None:
            found.append(requirement)
    return found
