"""What an environment image installs, decided on the host: its Python and its pinned dependencies.

For a SWE-bench (repo, version) with a swebench spec, the dependencies are those of the local provider's
venv (`harness.venv_build`, cached) after the project's own install has run in it once, frozen to exact pins:
the image and the local provider then test against the same versions. The project itself is left out (it is
installed per task, from the task's tree). Rows without a spec (the embedded fixture) get this interpreter's
pytest, as the local provider runs them under it. Build requirements (`[build-system] requires`, else
setuptools and wheel) are fetched too, so the per-task install works offline.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repoanchor.evals.harness import instance_env, venv_build
from repoanchor.evals.harness.dependencies.build_system import build_requires
from repoanchor.evals.harness.dependencies.current_env import needs_wrapper
from repoanchor.evals.harness.dependencies.editable import editable_install
from repoanchor.evals.harness.dependencies.pip_steps import run_step
from repoanchor.evals.harness.dependencies.release_date import pip_version, release_date
from repoanchor.evals.harness.instance_spec import spec_for
from repoanchor.evals.harness.venv_build import interpreter_version
from repoanchor.perturb.validation.compile_check import CURRENT
from repoanchor.scaffolds.records import InfraError


@dataclass
class EnvPlan:
    repo: str
    version: str | None
    python: str
    """The host interpreter the wheels are fetched for; the image gets the same X.Y."""
    python_version: str
    python_wanted: str | None
    fallback: str | None = None
    """Why the wanted Python is not the one used (it is not installed here), or None."""
    requirements: list[str] = field(default_factory=list)
    """Exact pins installed into the image's venv."""
    build_requires: list[str] = field(default_factory=list)
    """Fetched into the image's wheelhouse (not installed), for the per-task install."""
    pre_install: list[str] = field(default_factory=list)
    install: str | None = None
    skipped: list[str] = field(default_factory=list)
    wrap_interpreter: bool = False
    """The venv's interpreter is the venv's through any link (`dependencies.current_env`: tox --current-env)."""


def choose_python(wanted: str | None) -> tuple[str, str | None]:
    """(host interpreter for `wanted` "X.Y", or this one with the reason when `wanted` is not installed)."""
    if wanted is None:
        return getattr(sys, "_base_executable", sys.executable), None
    try:
        return venv_build.find_python(wanted), None
    except InfraError as error:
        used = ".".join(map(str, CURRENT))
        return getattr(sys, "_base_executable", sys.executable), f"{error.message}; using Python {used} instead"


def frozen(python: str) -> list[str]:
    """`pip freeze --all` of the venv at `python`, without the project (editable or from a local path)."""
    out = subprocess.run(
        [python, "-m", "pip", "freeze", "--all", "--exclude-editable"], capture_output=True, text=True, check=True
    ).stdout
    return sorted(line for line in out.splitlines() if line and not line.startswith(("-e", "#")) and " @ " not in line)


def plan_for(row: dict[str, Any], repo_cache: Path | None, venv_cache: Path) -> EnvPlan:
    """The plan for `row`'s (repo, version); builds (or reuses) the local provider's venv for spec rows."""
    spec = None if row.get("repoanchor_test_cmd") else spec_for(row)
    if spec is None:
        return _plan_without_spec(row)
    python, fallback = choose_python(spec["python"])
    used_spec = spec if fallback is None else {**spec, "python": interpreter_version(python)}
    with tempfile.TemporaryDirectory(prefix="repoanchor-envplan-") as scratch:
        tree = instance_env.checkout(instance_env.source_repo(row, repo_cache=repo_cache), row["base_commit"],
                                     Path(scratch) / "checkout")  # fmt: skip
        date = release_date(row, tree, used_spec)
        setup_commit = row.get("environment_setup_commit")
        venv, record = venv_build.build_venv(
            row["repo"], str(row["version"]), used_spec, tree, venv_cache, date, setup_commit
        )
        tree_steps, system_steps = venv_build.split_pre_install(spec)
        log: list[str] = []
        with venv_build.locked(venv):
            # Once, so that the project's own dependencies are in the venv and hence in the pins.
            install = editable_install(spec.get("install"), tree, pip_version(venv))
            for step in [*tree_steps, install or "true"]:
                run_step(step, tree, venv, log)
            pins = frozen(str(venv / "bin" / "python"))
        return EnvPlan(
            repo=row["repo"], version=str(row["version"]), python=python, python_version=interpreter_version(python),
            python_wanted=spec["python"], fallback=fallback, requirements=pins, build_requires=build_requires(tree),
            pre_install=tree_steps, install=install,
            skipped=[*record["skipped"], *(f"system step: {step}" for step in system_steps)],
            wrap_interpreter=needs_wrapper(spec),
        )  # fmt: skip


def _plan_without_spec(row: dict[str, Any]) -> EnvPlan:
    python, _ = choose_python(None)
    pins = [f"pytest=={importlib.metadata.version('pytest')}", *row.get("repoanchor_requirements", [])]
    return EnvPlan(
        repo=row["repo"], version=row.get("version"), python=python, python_version=interpreter_version(python),
        python_wanted=None, requirements=pins, build_requires=[], install=row.get("repoanchor_install"),
    )  # fmt: skip
