"""Level 1 of a suite task's validation: every Python file the perturbation or the remapped patch changed
compiles, and every changed module that imported in the (installed) original still imports. Imports run the
project's code, so they run as its tests do: after its install step, without the host's network, each module as
from a fresh interpreter, in a process forked from its package's (`import_probe.py`).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path, PurePosixPath

from repoanchor.evals.harness.container_run import run_in_tree
from repoanchor.evals.harness.dependencies.pip_steps import command_env
from repoanchor.evals.harness.grading import run_command
from repoanchor.evals.harness.instance_env import EnvSpec
from repoanchor.evals.harness.venv_build import locked
from repoanchor.evals.suites.checks.import_probe import probe_command
from repoanchor.evals.suites.remap import Rejected
from repoanchor.perturb.source.files import is_test_file
from repoanchor.perturb.validation.compile_check import CURRENT, installed_interpreters
from repoanchor.perturb.validation.isolation import offline_command
from repoanchor.perturb.validation.rejudge import Judged
from repoanchor.perturb.validation.validate import compile_errors

NOT_IMPORTED = {"setup.py", "conftest.py", "__main__.py", "noxfile.py", "fabfile.py"}


def module_names(tree: Path, files: list[str]) -> dict[str, str]:
    """Dotted name -> sys.path root, for the files that sit inside a package (scripts are left out)."""
    found = {}
    for rel in files:
        path = PurePosixPath(rel)
        if path.suffix != ".py" or path.name in NOT_IMPORTED or is_test_file(rel):
            continue
        parts = list(path.with_suffix("").parts)
        root = path.parent
        while root.parts and (tree / root / "__init__.py").is_file():
            root = root.parent
        if root == path.parent:  # not inside a package: a script or a top-level module
            continue
        name = parts[len(root.parts) :]
        found[".".join(name[:-1] if name[-1] == "__init__" else name)] = root.as_posix()
    return dict(sorted(found.items()))


def import_errors(
    tree: Path, modules: dict[str, str], env: EnvSpec, timeout: float = 600, strategy: str = "fork", jobs: int = 0
) -> dict[str, str]:
    """{module: error} for the modules that fail to import in `tree` under the instance's interpreter.

    `strategy` (see import_probe): `fork` imports each package once and forks per module, `isolated` imports
    each module from scratch; both give the same verdicts, whatever `jobs` (forks at once; 0: one per core)."""
    if not modules:
        return {}
    roots = sorted({str((tree / root).resolve()) for root in modules.values()})
    command = probe_command(env.python or "python", roots, list(modules), strategy, bytecode_folder(env), jobs)
    if env.route == "env-image":  # in a container of the image, after the install a test run does there
        script = f"{{ {env.install or 'true'}; }} >/dev/null 2>&1\n{shlex.join(command)}"
        return _import_result(run_in_tree(tree, script, env, timeout)[1], "", modules)
    # A shared venv is re-pointed by every test run's editable install: never import while one runs. The probe's
    # temporary files (its bytecode folder) go to a folder removed here: a module may end the probe's process.
    # Importing runs the project's code, without the host's network as its tests (pydicom's benchmarks download
    # test files at import, retrying for minutes).
    argv = offline_command(shlex.join(command))[0]
    with locked(Path(env.venv)) if env.venv else nullcontext(), tempfile.TemporaryDirectory(prefix="ra-imp-") as tmp:
        proc = subprocess.run(
            argv, cwd=tree, env={**command_env(env.venv), "TMPDIR": tmp}, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip
    return _import_result(proc.stdout, proc.stderr, modules)


def bytecode_folder(env: EnvSpec) -> str:
    """Where a local venv's import checks keep the bytecode of its standard library and installed packages
    (`<venv>.pycache`, beside the venv, never copied with it); "" (a temporary folder) elsewhere."""
    if env.route == "env-image" or not env.venv:
        return ""
    return str(Path(env.venv).with_name(Path(env.venv).name + ".pycache"))


def _import_result(stdout: str, stderr: str, modules: dict[str, str]) -> dict[str, str]:
    try:
        return json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {name: f"import check crashed: {(stderr or stdout).strip()[-400:]}" for name in modules}


def install_for_imports(tree: Path, env: EnvSpec, timeout: float = 1800) -> None:
    """The project's setup steps, as a test run does them, so generated modules (a `_version.py`) exist."""
    if not (env.pre_install or env.install) or env.route == "env-image":  # there, the import check installs
        return
    script = "\n".join([*env.pre_install, env.install or "", "true"])
    with locked(Path(env.venv)) if env.venv else nullcontext():
        run_command(script, tree, env, timeout)


def compile_check(tree: Path, files: list[str], when: str, env: EnvSpec, original: Path | None = None) -> dict:
    """Rejected where a changed file does not compile; else how the files this Python could not judge were judged
    (`perturb.validation.rejudge`: under the original's Python, or the project's own)."""
    return refuse_uncompiled(compile_errors(tree, files, original, project_python(env)), when)


def refuse_uncompiled(judged: Judged, when: str) -> dict[str, str]:
    if judged.errors:
        details = {"compile": judged.errors, **({"judged": judged.notes} if judged.notes else {})}
        raise Rejected("level1", f"{when}: {len(judged.errors)} changed file(s) do not compile", details)
    return judged.notes


def project_python(env: EnvSpec) -> str | None:
    """The interpreter the task's tests run with, where this host can run it: a local environment's, or the
    installed Python of an image's version (None where none is)."""
    if env.provider == "local":
        return env.python
    if not env.python_version:
        return None
    version = tuple(int(part) for part in env.python_version.split(".")[:2])
    return installed_interpreters([version]).get(version) if version != CURRENT else sys.executable


def import_check(
    tree: Path, checks: dict, env: EnvSpec, when: str, excuse: Callable[[dict[str, str]], set[str]] | None = None
) -> None:
    """Every module of `checks["modules"]` imports in `tree`, or Rejected; modules `excuse` names (they fail
    in the original too) leave `checks["modules"]` instead."""
    modules = checks["modules"]
    failed = import_errors(tree, modules, env)
    excused = excuse({name: modules[name] for name in failed}) if failed and excuse else set()
    if excused:
        checks["modules"] = {name: root for name, root in modules.items() if name not in excused}
        failed = {name: error for name, error in failed.items() if name not in excused}
    if failed:
        raise Rejected("level1", f"{when}: {len(failed)} module(s) no longer import", {"imports": failed})
