"""Semantic validation of a suite task, levels 1 and 3, from the task's repository and ground truth alone.

Level 1: every Python file the perturbation or the remapped patch changed compiles, and every
changed module that imported in the (installed) original still imports, before and after the patch. Level 3, as
SWE-bench grades: with the test patch applied to the variant, FAIL_TO_PASS fail and PASS_TO_PASS
pass before the remapped gold patch, and all pass after it. Tests run in a throwaway clone of
the task repository, never in it, so validation leaves nothing (no .orig, no bytecode) behind.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path, PurePosixPath

from repoanchor.evals.harness import instance_env
from repoanchor.evals.harness.container_run import choose_provider, env_image_spec, run_in_tree
from repoanchor.evals.harness.dependencies.pip_steps import command_env
from repoanchor.evals.harness.grading import grade, run_command, run_tests
from repoanchor.evals.harness.instance_env import PARALLEL_CHECKOUT, EnvSpec
from repoanchor.evals.harness.venv_build import locked, private_copy
from repoanchor.evals.suites.checks.import_probe import probe_command
from repoanchor.evals.suites.pair import yielding_to
from repoanchor.evals.suites.remap import Rejected, run_git
from repoanchor.evals.suites.stage_clock import StageClock, timed
from repoanchor.perturb.source.files import is_test_file
from repoanchor.perturb.validation.isolation import offline_command, offline_hint
from repoanchor.perturb.validation.validate import compile_errors, compile_sources, read_sources

# Importing these runs a program, not a module.
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


def compile_check(tree: Path, files: list[str], when: str) -> None:
    refuse_uncompiled(compile_errors(tree, files), when)


def refuse_uncompiled(errors: dict[str, str], when: str) -> None:
    if errors:
        raise Rejected("level1", f"{when}: {len(errors)} changed file(s) do not compile", {"compile": errors})


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


WRONG = {
    "f2p_passing": "FAIL_TO_PASS test(s) pass",
    "f2p_failing": "FAIL_TO_PASS test(s) fail",
    "p2p_failing": "PASS_TO_PASS test(s) fail",
}


def _summary(grade_result) -> dict:
    return {
        "status": grade_result.status,
        "f2p_passing": grade_result.f2p.success,
        "f2p_failing": grade_result.f2p.failure,
        "p2p_passing": grade_result.p2p.success,
        "p2p_failing": grade_result.p2p.failure,
    }


def level3_before(check: Path, row: dict, env: EnvSpec, timeout: float) -> dict:
    """Test patch on the bare variant: FAIL_TO_PASS must fail and PASS_TO_PASS pass."""
    return _level3(check, row, "", env, timeout, "before the gold patch", ("f2p_passing", "p2p_failing"))


def level3_after(check: Path, row: dict, env: EnvSpec, timeout: float) -> dict:
    """The remapped gold patch (`row['patch']`) plus the test patch: every listed test must pass."""
    return _level3(
        check, row, row["patch"], env, timeout, "after the remapped gold patch", ("f2p_failing", "p2p_failing")
    )


def _level3(check: Path, row: dict, patch: str, env: EnvSpec, timeout: float, when: str, wrong: tuple) -> dict:
    """The graded run with `patch`; Rejected (with the log's tail, to tell why) if a list in `wrong` is not empty."""
    run = run_tests(check, row, patch, env, timeout)
    if run.status != "completed":
        raise Rejected("level3", f"{when}: {run.status}", {"log": run.log[-3000:]})
    result = _summary(grade(row, run.outcomes, run.status))
    broken = [name for name in wrong if result[name]]
    if broken:
        counts = ", ".join(f"{len(result[name])} {WRONG[name]}" for name in broken)
        raise Rejected("level3", f"{when}: {counts}{offline_hint(run.log)}", {**result, "log": run.log[-3000:]})
    return result


def clone(repo: Path, dest: Path) -> Path:
    """A throwaway clone of a task repository: tests and installs never write into the suite. Its files are written
    by a worker per core (`PARALLEL_CHECKOUT`)."""
    run_git(dest.parent, *PARALLEL_CHECKOUT, "clone", "--quiet", str(repo), str(dest))
    return dest


def validate_task(
    check: Path,
    truth: dict,
    env: EnvSpec,
    timeout: float = 1800,
    clock: StageClock | None = None,
    excuse: Callable[[dict[str, str]], set[str]] | None = None,
) -> dict:
    """Levels 1 and 3 for one task in `check`, a clone of its repository; its record, or Rejected.

    Imports are checked after a test run, i.e. after the project's own install step, as the
    original's are: some projects only import once installed. `clock` times the tests and the imports
    (a build's StageClock). `excuse` (a build): given the modules that failed to import, those that fail in
    the original too; they are dropped from `truth`'s level-1 modules, which then lists only what the
    variant must import (what `suite validate` checks again)."""
    # An original task (suite `original`) changed no file: level 1 has nothing to check.
    row, checks = truth["row"], truth.get("level1") or {"files": [], "modules": {}, "patch_files": []}
    before = validate_bare(check, row, checks, env, timeout, clock, excuse)
    after = validate_patched(check, row, checks, env, timeout, clock, excuse)
    return {"level1": "ok", "before": before, "after": after}


def validate_bare(
    check: Path, row: dict, checks: dict, env: EnvSpec, timeout: float, clock: StageClock | None, excuse=None
) -> dict:
    """What needs no gold patch: level 1 on the variant as committed, and the run before the patch (its record).
    `row` may still lack the remapped patch (a build makes it meanwhile).

    The changed files are read first and compiled on a thread while the run's subprocess works (the run's install
    writes into the tree); a compile error still comes first, as when the compile ran before the run."""
    sources = read_sources(check, checks["files"])
    with ThreadPoolExecutor(max_workers=1) as beside:
        compiled = beside.submit(compile_sources, sources)

        def uncompiled() -> None:
            refuse_uncompiled(compiled.result(), "variant")

        with yielding_to(uncompiled), timed(clock, "tests"):
            before = level3_before(check, row, env, timeout)
        uncompiled()
    with timed(clock, "imports"):
        import_check(check, checks, env, "variant", excuse)
    return before


def validate_patched(
    check: Path, row: dict, checks: dict, env: EnvSpec, timeout: float, clock: StageClock | None, excuse=None
) -> dict:
    """The run after the remapped gold patch (`row['patch']`) (its record), and level 1 on the files it changes."""
    with timed(clock, "tests"):
        after = level3_after(check, row, env, timeout)
    compile_check(check, checks["patch_files"], "variant + remapped gold patch")
    with timed(clock, "imports"):
        import_check(check, checks, env, "variant + remapped gold patch", excuse)
    return after


def suite_env(
    truth: dict, check: Path, cache_dir: Path | None, provider: str = "local", private_venv: Path | None = None
) -> EnvSpec:
    """The environment for a task read back from a suite folder: `local` (the venv cache is shared) or
    `image` (the environment image of the task's repo and version, the clone `check` copied in per run).

    `private_venv`: where a local venv is copied for this task alone (a grade runs a candidate's code, which
    may write into its venv); without it the cached venv itself is used."""
    if choose_provider(truth["row"], provider)[0] == "image":
        return env_image_spec(truth["row"])
    cache = Path(cache_dir) if cache_dir else Path.home() / ".cache" / "repoanchor" / "venvs"
    env = instance_env.local_env(truth["row"], check, cache)
    if private_venv is None or not env.venv:
        return env
    copy = private_copy(Path(env.venv), private_venv)
    return env.model_copy(update={"venv": str(copy), "python": str(copy / "bin" / "python")})
