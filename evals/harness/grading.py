"""Running an instance's tests on a candidate patch, and grading the outcomes by SWE-bench's rules.

`run_tests` mirrors SWE-bench's eval flow on a local checkout: the candidate patch is applied (with the
same fallbacks as SWE-bench: `git apply`, then `patch --fuzz=5`), test files are reset to the base commit
and the test patch applied, then the test command runs between output markers. The whole log is kept in
the `TestRun`, so `outcomes_from_log` and `grade` can redo grading from a stored run without the checkout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from repoanchor.evals.harness import eval_script, instance_env
from repoanchor.evals.harness.container_run import run_in_tree
from repoanchor.evals.harness.dependencies.pip_steps import venv_variables
from repoanchor.evals.harness.instance_env import EnvSpec
from repoanchor.evals.harness.patch_guard import unsafe_paths
from repoanchor.evals.harness.venv_build import locked
from repoanchor.evals.harness.verdict import (
    Grade,
    RunStatus,
    TestGroup,
    TestRun,
    grade,
    grade_run,
    outcomes_from_log,
    patched_files,
)
from repoanchor.perturb.validation.isolation import offline_command, untrusted_env

__all__ = [
    "Grade", "RunStatus", "TestGroup", "TestRun", "apply_patch", "grade", "grade_run", "outcomes_from_log",
    "patched_files", "reset_test_files", "run_command", "run_pre_install", "run_tests",
]  # fmt: skip

# GNU patch keeps no .orig backups and discards rejects: a failed apply leaves no litter in the tree.
APPLY_COMMANDS = (
    ["git", "apply", "--verbose"],
    ["patch", "--batch", "--fuzz=5", "-p1", "--no-backup-if-mismatch", "--reject-file=-"],
)


def _run(args: list[str], cwd: Path, stdin: str | None = None) -> tuple[int, str]:
    proc = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, check=False)
    return proc.returncode, f"$ {' '.join(args)}\n{proc.stdout}{proc.stderr}"


def apply_patch(workdir: Path, patch: str) -> tuple[bool, str]:
    """Apply `patch` with SWE-bench's fallbacks; (applied, log). `patch` may leave .rej files on failure.

    A patch reaching out of the tree or into `.git` (see `patch_guard.unsafe_paths`) is refused untouched: GNU
    patch, the last fallback, would write there."""
    refused = unsafe_paths(patch)
    if refused:
        return False, "refused: the patch reaches where no patch may go:\n" + "\n".join(refused) + "\n"
    logs = []
    for command in APPLY_COMMANDS:
        code, log = _run(command, workdir, patch)
        logs.append(log)
        if code == 0:
            return True, "".join(logs)
    return False, "".join(logs)


def reset_test_files(workdir: Path, row: dict[str, Any]) -> None:
    """Test files back to the base commit (a candidate patch must not change the tests that grade it)."""
    for name in patched_files(row["test_patch"]):
        if _run(["git", "cat-file", "-e", f"{row['base_commit']}:{name}"], workdir)[0] == 0:
            _run(["git", "checkout", row["base_commit"], "--", name], workdir)
        else:
            (workdir / name).unlink(missing_ok=True)  # created by the test patch; a stale copy blocks it


def run_command(script: str, workdir: Path, env: EnvSpec, timeout: float, *, offline: bool = False) -> tuple[bool, str]:
    """Run `script` in bash as untrusted code (it runs the candidate's patch): the variable allow-list and a
    private HOME (see perturb.validation.isolation), without network when `offline`; (timed out, output).
    The whole process group is killed on timeout."""
    argv, note = offline_command(script) if offline else (["bash", "-c", script], "")
    with tempfile.TemporaryDirectory(prefix="repoanchor-grade-home-") as home:
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=untrusted_env(Path(home), venv_variables(env.venv)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            return False, note + proc.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            return True, note + proc.communicate()[0]


def run_pre_install(workdir: Path, env: EnvSpec) -> str:
    """The spec's tree-editing steps, as one best-effort script (they share shell variables); their log."""
    if not env.pre_install:
        return ""
    script = "\n".join([*env.pre_install, "true"])
    return f"$ pre_install\n{run_command(script, workdir, env, timeout=600)[1]}"


def run_tests(workdir: Path, row: dict[str, Any], patch: str, env: EnvSpec, timeout: float = 1800) -> TestRun:
    """Apply the test patch and `patch` (may be empty) to a fresh state of `workdir`, run and parse the tests."""
    if env.route == "image":  # a SWE-bench instance image: the repository is already in it
        from repoanchor.evals.harness.instance_image import run_in_image

        return run_in_image(row, patch, env, timeout)
    started = time.monotonic()
    workdir = Path(workdir)
    instance_env.reset_checkout(workdir, row["base_commit"])

    def done(status: RunStatus, log: str) -> TestRun:
        outcomes = outcomes_from_log(row, log) if status == "completed" else {}
        return TestRun(
            instance_id=row["instance_id"],
            status=status,
            outcomes=outcomes,
            log=log,
            seconds=time.monotonic() - started,
        )

    log = run_pre_install(workdir, env)
    if patch.strip():
        applied, apply_log = apply_patch(workdir, patch)
        log += apply_log
        if not applied:
            return done("patch_apply_failed", f"{log}\n{eval_script.PATCH_APPLY_FAILED}\n")
    reset_test_files(workdir, row)
    code, test_log = _run(["git", "apply", "--verbose"], workdir, row["test_patch"])
    log += test_log
    if code != 0:
        return done("test_patch_apply_failed", f"{log}\n{eval_script.PATCH_APPLY_FAILED}\n")
    timed_out, output = _install_and_test(workdir, row, env, timeout - (time.monotonic() - started))
    if timed_out:
        return done("timeout", f"{log}{output}\n{eval_script.TESTS_TIMED_OUT}\n")
    return done("completed", log + output)


def _install_and_test(workdir: Path, row: dict[str, Any], env: EnvSpec, timeout: float) -> tuple[bool, str]:
    """The project's install, then the tests between the markers; (timed out, output)."""
    started = time.monotonic()
    if env.route == "env-image":
        # The patches were applied here (git only); the install and the tests, which run the candidate's
        # code, run in a container of the image, offline, the install from the image's wheelhouse.
        script = eval_script.wrap_command(eval_script.command_for(row, eval_script.IMAGE_REPO_DIR), env.install)
        return run_in_tree(workdir, script, env, timeout)
    script = eval_script.wrap_command(eval_script.command_for(row, workdir.resolve()), None)
    # The venv is shared by every work folder of this repo/version; its install must not change mid-run.
    with locked(Path(env.venv)) if env.venv else nullcontext():
        # The install may fetch build dependencies, so it keeps the network (never a key); the tests, where a
        # candidate's conftest.py runs, do not get it. A failed install still lets the tests run and show it.
        install = eval_script.checked_install(env.install) if env.install else None
        timed_out, output = run_command(install, workdir, env, timeout) if install else (False, "")
        if not timed_out:
            timed_out, tests = run_command(script, workdir, env, timeout - (time.monotonic() - started), offline=True)
            output += tests
    return timed_out, output
