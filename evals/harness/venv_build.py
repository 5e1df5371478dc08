"""Virtualenvs for SWE-bench instances without Docker, built from `swebench` 4.1.0's per-repo install specs.

`swebench` 5.x dropped `MAP_REPO_VERSION_TO_SPECS`; 4.1.0 has both the specs and the log parsers, so it is
the one version used. A spec describes a conda environment; here it becomes a venv on the spec's Python
(found under pyenv or on PATH): conda package lists and `pip_packages` are pip-installed; an `environment.yml`
(xarray, matplotlib) is read from the checkout and its conda specs installed with pip under the spec's pins
(`dependencies.conda`); a requirements file or an environment file that pip cannot install at once (a package
since yanked, conda-only) is installed one requirement at a time, each one that fails skipped and recorded;
system steps (apt-get, locale-gen, /etc) are skipped and recorded. Dependencies live in a venv cached by
(repo, version, python, spec hash); the project itself is installed on every test run (`install`, after the
tree-editing `pre_install` steps), as SWE-bench's eval script reinstalls before testing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from repoanchor.evals.harness.dependencies.current_env import needs_wrapper, wrap_interpreter
from repoanchor.evals.harness.dependencies.dated_pins import named_requirements, pin_as_of
from repoanchor.evals.harness.dependencies.pip_steps import (
    full_python_version,
    install_each_on_failure,
    install_environment_file,
    run_step,
)
from repoanchor.evals.harness.dependencies.release_date import (
    FIRST_PIP_PYTHON,
    TODAY,
    ReleaseDate,
    bound_venv,
    exact_pins,
    spec_python,
)
from repoanchor.evals.harness.dependencies.requirements_file import PACKAGE_FILES, requirement_lines, requirements_text
from repoanchor.evals.harness.dependencies.setup_files import SetupFiles
from repoanchor.evals.harness.dependencies.wheel_pins import with_wheels
from repoanchor.perturb.validation.compile_check import CURRENT, installed_interpreters
from repoanchor.scaffolds.records import InfraError

READY = "repoanchor-ready.json"
TESTBED = re.compile(r"(?<![\w/.])/testbed(?![\w.-])")
SYSTEM_STEP = re.compile(r"^\s*(apt-get|apt|locale-gen|wget|curl)\b|/etc/")


def install_spec(repo: str, version: str | None) -> dict[str, Any] | None:
    """swebench's install spec for this repository and version, or None when it has none."""
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS

    return MAP_REPO_VERSION_TO_SPECS.get(repo, {}).get(str(version)) if version else None


def find_python(version: str) -> str:
    """An interpreter for "3.9"-style `version`: the running one if it matches, else pyenv's or PATH's."""
    wanted = tuple(int(part) for part in version.split(".")[:2])
    if wanted == CURRENT:
        return getattr(sys, "_base_executable", sys.executable)
    found = installed_interpreters([wanted]).get(wanted)
    if not found:
        raise InfraError("environment_setup", f"Python {version} is not installed (looked in pyenv and on PATH)")
    return found


def interpreter_version(python: str) -> str:
    """ "X.Y" of the interpreter at `python`."""
    probe = "import sys; print('%d.%d' % sys.version_info[:2])"
    proc = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    return proc.stdout.strip()


def split_pre_install(spec: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(steps to run in the work folder, system steps skipped); SWE-bench's /testbed (the repository) is `$PWD` there
    (matplotlib's `QHULL_BUILD_DIR="/testbed/build"` had made /testbed on the host)."""
    steps = [TESTBED.sub("$PWD", step) for step in spec.get("pre_install", [])]
    return [s for s in steps if not SYSTEM_STEP.search(s)], [s for s in steps if SYSTEM_STEP.search(s)]


def venv_key(repo: str, version: str, spec: dict[str, Any], as_of: str | None = None) -> str:
    # The spec's hash is in the key so an edited spec never reuses a venv built from the old one; a venv whose
    # environment file was once skipped is not reused either, nor one resolved under another release date.
    keyed = {**spec, "environment_file": 1} if spec.get("packages") == "environment.yml" else spec
    # Nor one whose requirements or environment file was read at an instance's base commit, not at the version's
    # environment setup commit (setup_files.py): which instance built it first decided what it holds.
    keyed = {**keyed, "setup_files": "environment_setup_commit"} if spec.get("packages") in PACKAGE_FILES else keyed
    keyed = {**keyed, "uploaded_prior_to": as_of} if as_of else keyed
    # Before pip 26 (Pythons before 3.9) a date is applied as constraints (dated_pins.py); such venvs had been
    # built with today's releases under the same key.
    keyed = {**keyed, "dated_by": "constraints"} if as_of and spec_python(spec) < FIRST_PIP_PYTHON else keyed
    keyed = {**keyed, "interpreter": "wrapped"} if needs_wrapper(spec) else keyed
    digest = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:10]
    return f"{repo.replace('/', '__')}-{version}-py{spec['python']}-{digest}"


@contextmanager
def locked(venv: Path):
    """One builder or test run per venv at a time: an editable install points the venv at one work folder."""
    venv.parent.mkdir(parents=True, exist_ok=True)
    with (venv.parent / f"{venv.name}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _requirements_file(venv: Path) -> Path:
    return venv / "requirements.txt"


def _requirements_step(venv: Path) -> str:
    return f"python -m pip install -r {_requirements_file(venv)}"


# Every venv first gets the newest pip its Python runs. The bundled one resolves worse: Python 3.9's pip 23.0.1
# backtracked over 8 minutes on Django 4.2's unpinned test requirements, which pip 26 resolves in 5 s; Python
# 3.5/3.6's pip 18.1 takes the newest release (a find-links wheel says no Requires-Python) and fails on it
# instead of trying older ones, and there the cap is the last pip that runs on them.
RESOLVER_PIP = {"3.5": "pip<21", "3.6": "pip<22"}


def dependency_steps(repo: str, spec: dict[str, Any], files: SetupFiles, venv: Path) -> tuple[list[str], list[str]]:
    """(pip commands for the spec's dependencies, skipped steps with reasons); its files are read from `files`."""
    steps, skipped = [], []
    packages = spec.get("packages", "")
    if packages == "requirements.txt":
        _requirements_file(venv).write_text(requirements_text(repo, files, spec.get("reqs_path")))
        steps.append(_requirements_step(venv))
    elif packages == "environment.yml":
        pass  # best effort, after the pins: `install_environment_file`
    elif packages:
        # Conda package names; the ones SWE-bench lists are on PyPI under the same names.
        steps.append(f"python -m pip install {packages}")
    if spec.get("pip_packages"):
        steps.append("python -m pip install " + " ".join(f"'{p}'" for p in spec["pip_packages"]))
    return steps, skipped


def upgrade_pip(spec: dict[str, Any], checkout: Path, venv: Path, log: list[str]) -> tuple[list[str], list[str]]:
    """(steps run, skipped with the reason): the newest pip the venv's Python runs; where it cannot be had (an
    index without pip), the bundled one goes on, and the record says so."""
    step = f"python -m pip install --upgrade '{RESOLVER_PIP.get(str(spec.get('python')), 'pip')}'"
    try:
        run_step(step, checkout, venv, log, timeout=600)
    except InfraError as error:
        return [], [f"{step}: {str(error)[-300:]}"]
    return [step], []


def build_venv(
    repo: str, version: str, spec: dict[str, Any], checkout: Path, cache_dir: Path, date: ReleaseDate = TODAY,
    setup_commit: str | None = None,
) -> tuple[Path, dict]:  # fmt: skip
    """The cached venv for (repo, version, python), its dependencies as released by `date`, built now if missing;
    returns it and its build record. A build that fails under the date is made again with today's releases, and
    the record says why. Requirements and environment files are read at `setup_commit` (the row's
    `environment_setup_commit`, as SWE-bench does) where the checkout's history has it."""
    # Absolute: the install steps run in the checkout, where a relative cache path names nothing.
    venv = Path(cache_dir).resolve() / venv_key(repo, version, spec, date.when)
    with locked(venv):
        if (venv / READY).is_file():
            return venv, json.loads((venv / READY).read_text())
        files = SetupFiles(checkout, setup_commit)
        try:
            record = _build(repo, spec, files, venv, date)
        except InfraError as error:
            if date.when is None:
                raise
            record = _build(repo, spec, files, venv, TODAY)
            record["skipped"].insert(0, f"dependencies as of {date.when} failed, today's releases instead: "
                                        f"{error.message.strip().splitlines()[-1][:300]}")  # fmt: skip
        (venv / READY).write_text(json.dumps(record, indent=1))
        return venv, record


def _build(repo: str, spec: dict[str, Any], files: SetupFiles, venv: Path, date: ReleaseDate) -> dict:
    shutil.rmtree(venv, ignore_errors=True)  # a half-built venv from an interrupted or failed build
    checkout = files.checkout
    python = find_python(spec["python"])
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True)
    log: list[str] = []
    try:
        steps, skipped = upgrade_pip(spec, checkout, venv, log)
        full_version = full_python_version(venv)
        spec, moved = with_wheels(spec, full_version)  # conda's pins PyPI has no wheel of
        skipped += moved
        steps += [wrap_interpreter(venv)] if needs_wrapper(spec) else []
        pins = exact_pins(spec) if date.when else []
        if pins:
            steps.append("python -m pip install " + " ".join(shlex.quote(p) for p in pins))  # markers quote
            run_step(steps[-1], checkout, venv, log)
        unbound, dated = bound_venv(venv, date), {}
        if unbound and date.when:  # an older pip: this tool's own pip chooses the top-level versions
            dated, notes = pin_as_of(venv, spec, named_requirements(repo, spec, files), date.when, full_version)
            unbound, skipped = (None if dated else unbound), [*skipped, *notes]
        skipped += [unbound] if unbound else []
        done, missed = _dependencies(repo, spec, files, venv, log)
    finally:
        (venv / "build.log").write_text("\n".join(log))
    as_of = None if unbound else date.when
    skipped += [files.fallback] if files.fallback else []
    record = {"python": python, "steps": [*steps, *done], "skipped": [*skipped, *missed], "dependencies_as_of": as_of}
    record |= {"dated_pins": dated} if dated else {}
    record["setup_files"] = files.where()
    return record | {"dependencies_date": date.source}


def _dependencies(repo: str, spec: dict[str, Any], files: SetupFiles, venv: Path, log: list[str]):
    """(steps run, skipped with reasons) of the spec's dependencies."""
    checkout = files.checkout
    planned, skipped = dependency_steps(repo, spec, files, venv)
    steps: list[str] = []
    for step in planned:
        if step == _requirements_step(venv):
            lines = requirement_lines(_requirements_file(venv))
            done, missed = install_each_on_failure(step, lines, "", "requirements.txt", checkout, venv, log)
            steps, skipped = [*steps, *done], [*skipped, *missed]
        else:
            run_step(step, checkout, venv, log)
            steps.append(step)
    if spec.get("packages") == "environment.yml":
        done, missed = install_environment_file(repo, spec, files, venv, log)
        steps, skipped = [*steps, *done], [*skipped, *missed]
    return steps, skipped


def private_copy(venv: Path, dest: Path) -> Path:
    """A copy of the cached `venv` at `dest`, for one grade: the candidate's code (its conftest.py, its install)
    runs with write access to the venv it is given, and must not change what a later grade runs. Copied under
    the venv's lock (no install half-done); the scripts in bin/ and the pip.conf (its constraints file) that name
    the venv's path name the copy's."""
    venv, dest = Path(venv), Path(dest)
    with locked(venv):
        shutil.copytree(venv, dest, symlinks=True)
    old, new = str(venv).encode(), str(dest).encode()
    for script in [*(dest / "bin").iterdir(), dest / "pip.conf"]:
        if script.is_file() and not script.is_symlink():
            content = script.read_bytes()
            if old in content:
                script.write_bytes(content.replace(old, new))
    return dest
