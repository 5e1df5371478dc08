"""pip's steps in an instance venv: the environment they run with (the venv first on PATH, the caller's variables
that would change how tests run or import left out), one step with its output logged, a batch that falls back to
one requirement at a time where one of them fails, and a repository's environment file under the spec's pins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from repoanchor.evals.harness.dependencies.conda import environment_requirements
from repoanchor.evals.harness.dependencies.setup_files import SetupFiles
from repoanchor.scaffolds.records import InfraError

# Variables from the caller that would change how the project's tests run or where they import from.
_DROPPED = ("PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "VIRTUAL_ENV", "CONDA_PREFIX")


def command_env(venv: Path | str | None) -> dict[str, str]:
    """The environment for building a venv (trusted code at the base commit; pip may need the host's index
    settings): the host's variables, the venv (or this interpreter) first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(venv_variables(venv))
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keeps __pycache__ out of the checkout that gets diffed
    return env


def venv_variables(venv: Path | str | None) -> dict[str, str]:
    """PATH with the venv's (or this interpreter's) bin first, and VIRTUAL_ENV when there is a venv."""
    bin_dir = Path(venv) / "bin" if venv else Path(sys.executable).parent
    found = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return {**found, "VIRTUAL_ENV": str(venv)} if venv else found


def full_python_version(venv: Path) -> str:
    """The venv's Python as "X.Y.Z": pip's `--python-version` reads "3.6" as 3.6.0 (pandas 1.1.5 requires 3.6.1)."""
    probe = "import platform; print(platform.python_version())"
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def host_dry_run(python: str, *options: str) -> list[str]:
    """The command of this tool's own pip (26+) choosing versions for a venv's Python `python` ("X.Y.Z"): nothing
    installed, no dependency followed (`dated_pins`, `wheel_pins`); `options` and the requirements follow."""
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed", "--no-deps"]
    return [*command, "--python-version", python, *options]


def run_step(command: str, cwd: Path, venv: Path | None, log: list[str], timeout: float = 1800) -> None:
    """Run one setup command with the venv first on PATH; its output goes to `log`, failure raises."""
    proc = subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=command_env(venv), capture_output=True, text=True, timeout=timeout
    )
    log.append(f"$ {command}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        raise InfraError("environment_setup", f"`{command}` failed in {cwd}:\n{(proc.stdout + proc.stderr)[-3000:]}")


def install_environment_file(
    repo: str, spec: dict[str, Any], files: SetupFiles, venv: Path, log: list[str]
) -> tuple[list[str], list[str]]:
    """(steps run, skipped with reasons): the repository's environment file (read from `files`: at the environment
    setup commit), pip-installed under the spec's `pip_packages` pins (constraints: the file may not move them),
    all at once, else one requirement at a time."""
    from swebench.harness.constants import MAP_REPO_TO_ENV_YML_PATHS

    paths = spec.get("env_yml_path") or MAP_REPO_TO_ENV_YML_PATHS.get(repo, [])  # a row's own spec names its own
    found = files.first(paths)
    if found is None:
        return [], [f"packages: environment.yml: none of {paths} in {files.where()}"]
    checkout = files.checkout
    requirements = environment_requirements(found[1])
    constraints = venv / "constraints.txt"
    constraints.write_text("\n".join(spec.get("pip_packages") or []) + "\n")
    command = f"python -m pip install -c {constraints} " + " ".join(f"'{r}'" for r in requirements)
    return install_each_on_failure(command, requirements, f"-c {constraints} ", "environment.yml", checkout, venv, log)


def install_each_on_failure(
    command: str, requirements: list[str], options: str, label: str, checkout: Path, venv: Path, log: list[str]
) -> tuple[list[str], list[str]]:
    """(steps run, skipped with reasons): `command` installs `requirements` at once; when it fails (one of them
    is no longer installable: yanked, conda-only, needs a newer Python), each is installed alone and each one pip
    cannot install is skipped, recorded under `label` with pip's last line."""
    try:
        run_step(command, checkout, venv, log)
        return [command], []
    except InfraError:
        pass  # one requirement pip cannot meet fails them all: each alone, then, and every failure recorded
    done, skipped = [], []
    for requirement in requirements:
        single = f"python -m pip install {options}'{requirement}'"
        try:
            run_step(single, checkout, venv, log)
            done.append(single)
        except InfraError as error:
            skipped.append(f"{label}: {requirement}: {error.message.strip().splitlines()[-1][:200]}")
    return done, skipped
