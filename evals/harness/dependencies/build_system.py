"""What a checkout's `pyproject.toml` says about building it: its backend and its build requirements.

A project without a `[build-system]` table builds with setuptools' legacy backend and `setuptools>=40.8.0` +
`wheel`, as pip assumes. `pins_pre_pep660_setuptools` tells the requirements that allow no setuptools with PEP
660's editable hooks (64 and later), as astroid 2.14's `setuptools~=62.6` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomllib
from packaging.requirements import InvalidRequirement, Requirement

LEGACY_BUILD = ["setuptools>=40.8.0", "wheel"]
"""What pip assumes for a project without [build-system]."""
SETUPTOOLS_BACKENDS = {"setuptools.build_meta", "setuptools.build_meta:__legacy__"}
PEP660_SETUPTOOLS = "setuptools>=64"
"""The first setuptools with PEP 660's editable hooks."""
_LATER_SETUPTOOLS = ("64.0.0", "68.0.0", "75.0.0", "80.0.0")


def build_system(checkout: Path) -> dict[str, Any] | None:
    """The `[build-system]` table ({} where pyproject.toml has none or there is no pyproject.toml); None where the
    file cannot be read as TOML."""
    pyproject = checkout / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8")).get("build-system", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def setuptools_backend(checkout: Path) -> bool:
    """Whether the project at `checkout` builds with setuptools (pip's default without a build-system table)."""
    system = build_system(checkout)
    return system is not None and system.get("build-backend", "setuptools.build_meta:__legacy__") in SETUPTOOLS_BACKENDS


def build_requires(checkout: Path) -> list[str]:
    """The build requirements pip installs for an isolated build of `checkout`."""
    declared = (build_system(checkout) or {}).get("requires")
    return list(declared) if declared else list(LEGACY_BUILD)


def pins_pre_pep660_setuptools(requires: list[str]) -> bool:
    """Whether `requires` names setuptools in a range that holds no release with PEP 660's hooks."""
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if requirement.name.lower() == "setuptools" and requirement.specifier:
            return not any(requirement.specifier.contains(later) for later in _LATER_SETUPTOOLS)
    return False


def with_pep660_setuptools(requires: list[str]) -> list[str]:
    """`requires` with its setuptools requirement raised to one with PEP 660's hooks."""
    return [PEP660_SETUPTOOLS if _names_setuptools(text) else text for text in requires]


def _names_setuptools(text: str) -> bool:
    try:
        return Requirement(text).name.lower() == "setuptools"
    except InvalidRequirement:
        return False
