"""Dependencies as of a date in a venv whose pip cannot bound them itself (pip < 26: Pythons 3.5-3.8).

This tool's own pip (26+) resolves each top-level requirement the venv's build installs as released by the date,
for the venv's Python (`--python-version`, `--no-deps`, `--dry-run --report`), and the venv's pip gets the chosen
versions as constraints in its pip.conf, so its build and every later install in it (a test run's project
install) keep them. scikit-learn 0.20-0.22's specs (Python 3.6) list `cython` unpinned: today's Cython 3 does not
compile them and every test failed at `import sklearn`; as of the environment setup commit pip picks 0.29.x.

Only the requirements named are pinned: what they depend on is the newest release for that Python (the venv's pip
skips releases needing a newer one). A spec's exact pins (`numpy==1.19.2`) are its own choice and are not
constrained. A requirement this pip cannot resolve so (no release before the date for that Python, a URL, an
sdist whose metadata would need building here) stays undated, and the venv's record says which and why.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from repoanchor.evals.harness.dependencies.pip_steps import host_dry_run
from repoanchor.evals.harness.dependencies.requirements_file import (
    exact_pin,
    package_list,
    requirements_in,
    requirements_text,
)
from repoanchor.evals.harness.dependencies.setup_files import SetupFiles

CONSTRAINTS = "dated-constraints.txt"
"""The venv's file of chosen versions, named by its pip.conf."""
RESOLVE_TIMEOUT = 600


def top_level_requirements(
    spec: dict[str, Any], requirement_lines: list[str], python: str
) -> tuple[list[str], list[str]]:
    """(one requirement per project the venv's build installs by name, unpinned or bounded; why others are left)
    from the spec's package list, its `pip_packages` and its requirements file's lines. Specifiers given for one
    project in several places are joined; a project pinned anywhere to one version is its own choice."""
    listed = package_list(spec) + list(spec.get("pip_packages") or []) + requirement_lines
    merged: dict[str, Requirement] = {}
    left: list[str] = []
    for text in listed:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            left.append(f"{text}: not a requirement pip can date here, left undated")
            continue
        if requirement.url:
            left.append(f"{text}: a URL, left undated")
            continue
        if requirement.marker and not requirement.marker.evaluate(_target(python)):
            continue  # not installed on the venv's Python here
        requirement.marker = None
        name = canonicalize_name(requirement.name)
        if name in merged:
            merged[name].specifier &= requirement.specifier
        else:
            merged[name] = requirement
    exact = {name for name, req in merged.items() if exact_pin(str(req))}  # a wildcard (`==1.*`) is dated
    return [str(req) for name, req in merged.items() if name not in exact], left


def _target(python: str) -> dict[str, str]:
    return {"python_version": ".".join(python.split(".")[:2]), "python_full_version": python}


def named_requirements(repo: str, spec: dict[str, Any], files: SetupFiles) -> list[str]:
    """The requirements file's lines, where the spec installs one (read from `files`, as the build reads it)."""
    if spec.get("packages") != "requirements.txt":
        return []
    return requirements_in(requirements_text(repo, files, spec.get("reqs_path")))


def resolve_as_of(requirements: list[str], python: str, when: str) -> tuple[dict[str, str], list[str]]:
    """({project: version} this pip picks for each requirement on Python `python` as released by `when`, why the
    others could not be). All at once first; where that fails, one at a time, so one bad requirement costs only
    itself."""
    if not requirements:
        return {}, []
    chosen, error = _resolve(requirements, python, when)
    if error is None:
        return chosen, []
    pins, left = {}, []
    for requirement in requirements:
        one, error = _resolve([requirement], python, when)
        pins.update(one)
        if error is not None:
            left.append(f"{requirement}: not resolved as of {when} for Python {python} ({error}), left undated")
    return pins, left


def _resolve(requirements: list[str], python: str, when: str) -> tuple[dict[str, str], str | None]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        command = host_dry_run(python, "--uploaded-prior-to", when, "--report", str(report), *requirements)
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return {}, f"pip took over {RESOLVE_TIMEOUT} s"
        if proc.returncode != 0 or not report.is_file():
            lines = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")] or ["pip failed"]
            return {}, lines[0][:300]
        installs = json.loads(report.read_text())["install"]
    return {item["metadata"]["name"]: item["metadata"]["version"] for item in installs}, None


def constrain_venv(venv: Path, pins: dict[str, str]) -> None:
    """Write `pins` as the constraints of every pip install in `venv` (its pip.conf)."""
    constraints = venv / CONSTRAINTS
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in sorted(pins.items())))
    (venv / "pip.conf").write_text(f"[install]\nconstraint = {constraints}\n")


def pin_as_of(
    venv: Path, spec: dict[str, Any], requirement_lines: list[str], when: str, python: str
) -> tuple[dict[str, str], list[str]]:
    """Constrain `venv` (whose Python is `python`, "X.Y.Z") to the versions of its top-level requirements as
    released by `when`; returns the pins and what its record says (what was not dated, and why)."""
    wanted, left = top_level_requirements(spec, requirement_lines, python)
    pins, unresolved = resolve_as_of(wanted, python, when)
    if pins:
        constrain_venv(venv, pins)
        left.insert(0, f"dependencies as of {when} for the {len(pins)} requirement(s) named only (the venv's pip has "
                       f"no --uploaded-prior-to, so this tool's pip chose them): what they depend on is the newest "
                       f"release for Python {python}")  # fmt: skip
    return pins, left + unresolved
