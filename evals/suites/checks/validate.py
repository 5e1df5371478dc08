"""Semantic validation of a suite task, levels 1 (`level1.py`) and 3, from the task's repository and ground truth
alone.

Level 1: every Python file the perturbation or the remapped patch changed compiles, and every
changed module that imported in the (installed) original still imports, before and after the patch. Level 3, as
SWE-bench grades: with the test patch applied to the variant, FAIL_TO_PASS fail and PASS_TO_PASS
pass before the remapped gold patch, and all pass after it. Tests run in a throwaway clone of
the task repository, never in it, so validation leaves nothing (no .orig, no bytecode) behind.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from repoanchor.evals.harness import instance_env
from repoanchor.evals.harness.container_run import choose_provider, env_image_spec
from repoanchor.evals.harness.eval_script import install_hint
from repoanchor.evals.harness.grading import grade, run_tests
from repoanchor.evals.harness.instance_env import PARALLEL_CHECKOUT, EnvSpec
from repoanchor.evals.harness.venv_build import private_copy
from repoanchor.evals.suites.checks.level1 import compile_check, import_check, project_python, refuse_uncompiled
from repoanchor.evals.suites.pair import yielding_to
from repoanchor.evals.suites.remap import Rejected, run_git
from repoanchor.evals.suites.stage_clock import StageClock, timed
from repoanchor.perturb.validation.compile_check import compile_sources, read_sources
from repoanchor.perturb.validation.isolation import offline_hint
from repoanchor.perturb.validation.rejudge import rejudged

# Importing these runs a program, not a module.
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
        counts = ", ".join(f"{len(result[name])} {WRONG[name]} ({_first(result[name])})" for name in broken)
        hints = install_hint(run.log) + offline_hint(run.log)
        raise Rejected("level3", f"{when}: {counts}{hints}", {**result, "log": run.log[-3000:]})
    return result


def _first(tests: list[str], shown: int = 3) -> str:
    """The first `shown` test ids, and how many more: a rejection says which tests, not only how many."""
    more = f", and {len(tests) - shown} more" if len(tests) > shown else ""
    return ", ".join(tests[:shown]) + more


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
    check: Path,
    row: dict,
    checks: dict,
    env: EnvSpec,
    timeout: float,
    clock: StageClock | None,
    excuse=None,
    original: Path | None = None,
) -> dict:
    """What needs no gold patch: level 1 on the variant as committed, and the run before the patch (its record).
    `row` may still lack the remapped patch (a build makes it meanwhile). `original` (a build): the source tree,
    which judges a file this Python cannot compile (`perturb.validation.rejudge`).

    The changed files are read first and compiled on a thread while the run's subprocess works (the run's install
    writes into the tree); a compile error still comes first, as when the compile ran before the run."""
    sources = read_sources(check, checks["files"])
    with ThreadPoolExecutor(max_workers=1) as beside:
        compiled = beside.submit(compile_sources, sources)

        def uncompiled() -> dict[str, str]:
            return refuse_uncompiled(rejudged(compiled.result(), check, original, project_python(env)), "variant")

        with yielding_to(uncompiled), timed(clock, "tests"):
            before = level3_before(check, row, env, timeout)
        notes = uncompiled()
    with timed(clock, "imports"):
        import_check(check, checks, env, "variant", excuse)
    return before | ({"level1_notes": notes} if notes else {})


def validate_patched(
    check: Path, row: dict, checks: dict, env: EnvSpec, timeout: float, clock: StageClock | None, excuse=None
) -> dict:
    """The run after the remapped gold patch (`row['patch']`) (its record), and level 1 on the files it changes."""
    with timed(clock, "tests"):
        after = level3_after(check, row, env, timeout)
    notes = compile_check(check, checks["patch_files"], "variant + remapped gold patch", env)
    with timed(clock, "imports"):
        import_check(check, checks, env, "variant + remapped gold patch", excuse)
    return after | ({"level1_notes": notes} if notes else {})


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
