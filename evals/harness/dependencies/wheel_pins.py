"""A spec's exact pin with no wheel for the venv's Python, moved to the nearest later release of its series with one.

SWE-bench's specs describe conda environments, and conda's channels built packages for Pythons that the PyPI
release never had wheels for: scikit-learn 1.3's spec pins numpy 1.19.2 and scipy 1.5.2 on Python 3.9, whose
first wheels for 3.9 came with numpy 1.19.3 and scipy 1.5.4. From source, numpy 1.19.2 needs Cython < 3 and
scipy a Fortran compiler: the venv build failed, and every instance of the version with it. Such a pin becomes
the lowest later release of the same X.Y series that has a wheel for the venv's Python (a bug-fix release of the
version the spec chose), and the venv's record says so. A pin whose series has none is left as it is (pip builds
it, or says why not).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from repoanchor.evals.harness.dependencies.pip_steps import host_dry_run
from repoanchor.evals.harness.dependencies.release_date import exact_pins
from repoanchor.evals.harness.dependencies.requirements_file import exact_pin, package_list

DRY_RUN_TIMEOUT = 600
_LISTED = re.compile(r"\(from versions: ([^)]*)\)")


def with_wheels(
    spec: dict[str, Any], python: str, timeout: float = DRY_RUN_TIMEOUT
) -> tuple[dict[str, Any], list[str]]:
    """`spec` with each exact pin of its package list and `pip_packages` that has no wheel for Python `python` (the
    venv's full version) moved as the module says; and a line for the record per pin moved. `timeout`: seconds each
    of pip's dry runs may take (a check it cannot finish leaves the pins as written, and says so)."""
    listed = package_list(spec)
    pins = sorted(set(exact_pins(spec)))
    if not pins:
        return spec, []
    all_wheels, messages = _dry_run(pins, python, timeout)  # one call where every pin has a wheel (astropy 1.3 pins 28)
    if all_wheels is None:  # the index did not answer: each pin alone would wait as long
        return spec, [f"exact pins not checked for wheels for Python {python} ({messages}): left as written"]
    if all_wheels:
        return spec, []
    moved = {text: found for text in pins if (found := _moved(text, python, timeout))}
    if not moved:
        return spec, []
    changed = dict(spec)
    if listed:
        changed["packages"] = " ".join(shlex.quote(moved[t][0] if t in moved else t) for t in listed)
    if spec.get("pip_packages"):
        changed["pip_packages"] = [moved[t][0] if t in moved else t for t in spec["pip_packages"]]
    return changed, [note for _, note in (moved[text] for text in sorted(moved))]


def _moved(text: str, python: str, timeout: float) -> tuple[str, str] | None:
    """(the replacement requirement, why) for an exact pin with no wheel for `python`, else None."""
    pinned = exact_pin(text)
    if pinned is None:
        return None
    name, version = pinned
    found = _wheel_versions(f"{name}=={version}", python, timeout)
    if found is None:
        return None  # the pin has a wheel (or pip could not tell): left as the spec wrote it
    later = sorted(v for v in found if v > version and v.release[:2] == version.release[:2])
    if not later:
        return None
    series = ".".join(map(str, version.release[:2]))
    why = (f"{text}: no wheel for Python {python} on the index; {name}=={later[0]} instead (the first later {series} "
           f"release with one: conda's channels had built the pinned one, PyPI's release did not)")  # fmt: skip
    return repinned(text, later[0]), why


def repinned(text: str, version: Version) -> str:
    """Requirement `text` pinned to `version` instead, its extras and marker kept."""
    requirement = Requirement(text)
    requirement.specifier = SpecifierSet(f"=={version}")
    return str(requirement)


def _dry_run(requirements: list[str], python: str, timeout: float) -> tuple[bool | None, str]:
    """(whether every requirement has a wheel for `python`, pip's messages); None: pip could not say in time."""
    command = host_dry_run(python, "--only-binary", ":all:", *requirements)
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, f"pip took over {timeout:g} s"
    return proc.returncode == 0, proc.stderr


def _wheel_versions(requirement: str, python: str, timeout: float) -> list[Version] | None:
    """None where `requirement` has a wheel for `python`; else the versions that have one, as pip lists them."""
    has_wheel, messages = _dry_run([requirement], python, timeout)
    listed = _LISTED.search(messages)
    if has_wheel or listed is None:
        return None
    versions = []
    for text in listed.group(1).split(","):
        try:
            versions.append(Version(text.strip()))
        except InvalidVersion:
            continue
    return versions
