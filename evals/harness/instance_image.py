"""The `image` provider: an instance's tests in its SWE-bench-style image, the repository at /testbed.

One container per run, `--network none`, removed afterwards. The candidate patch is applied with SWE-bench's
fallbacks, then the row's own `eval_script` runs unchanged (it resets the test files, applies the test
patch and prints the output markers); rows without one (the fixture) get the same steps written here.
Published SWE-bench images need a registry; without one, any local image with the repo at /testbed works.
"""

from __future__ import annotations

import io
import shlex
import tarfile
import time
from typing import Any

from repoanchor.evals.harness import eval_script
from repoanchor.evals.harness.container_run import one_off_container
from repoanchor.evals.harness.instance_env import EnvSpec
from repoanchor.evals.harness.verdict import TestRun, outcomes_from_log, patched_files
from repoanchor.scaffolds.environments.docker_container import TIMEOUT_CODES
from repoanchor.scaffolds.records import InfraError

STAGE = "/tmp/repoanchor"
# Exit codes of run.sh that say which patch did not apply (the row's own eval_script never exits with them).
CANDIDATE_FAILED, TEST_PATCH_FAILED = 90, 91
REPO = eval_script.IMAGE_REPO_DIR


def generated_eval_script(row: dict[str, Any]) -> str:
    """SWE-bench's eval-script steps for a row that carries no `eval_script` of its own."""
    files = " ".join(shlex.quote(name) for name in patched_files(row["test_patch"]))
    failed = f"{{ echo '{eval_script.PATCH_APPLY_FAILED}'; exit {TEST_PATCH_FAILED}; }}"
    return (
        f"cd {REPO}\ngit checkout {row['base_commit']} -- {files} 2>/dev/null\n"
        f"git apply --verbose {STAGE}/test.diff || {failed}\n"
        + eval_script.wrap_command(eval_script.command_for(row, REPO))
    )


def run_script(row: dict[str, Any], patch: str) -> str:
    apply = f"git apply --verbose {STAGE}/candidate.diff || patch --batch --fuzz=5 -p1 -i {STAGE}/candidate.diff"
    steps = [f"cd {REPO}"]
    if patch.strip():
        steps.append(f"{{ {apply}; }} || {{ echo '{eval_script.PATCH_APPLY_FAILED}'; exit {CANDIDATE_FAILED}; }}")
    steps.append(f"bash {STAGE}/eval.sh")
    return "\n".join(steps) + "\n"


def _archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"repoanchor/{name}")
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def run_in_image(row: dict[str, Any], patch: str, env: EnvSpec, timeout: float):
    """Run the tests in a fresh container of `env.image`; returns a grading.TestRun."""
    import docker

    started = time.monotonic()
    files = {
        "candidate.diff": patch,
        "test.diff": row["test_patch"],
        "eval.sh": row.get("eval_script") or generated_eval_script(row),
        "run.sh": run_script(row, patch),
    }
    try:  # as root: a SWE-bench image's /testbed and environment belong to root
        with one_off_container(env.image) as container:
            container.put_archive("/tmp", _archive(files))
            argv = ["timeout", "-k", "5", str(timeout), "bash", "-c", f"exec bash {STAGE}/run.sh 2>&1"]
            code, output = container.exec_run(argv, stderr=False)
    except docker.errors.DockerException as error:
        raise InfraError("environment_exec", f"{row['instance_id']}: could not run in {env.image}: {error}") from error
    log = (output or b"").decode("utf-8", "replace")
    if code in (CANDIDATE_FAILED, TEST_PATCH_FAILED):
        status = "patch_apply_failed" if code == CANDIDATE_FAILED else "test_patch_apply_failed"
    elif code in TIMEOUT_CODES:
        status, log = "timeout", f"{log}\n{eval_script.TESTS_TIMED_OUT}\n"
    else:
        status = "completed"
    outcomes = outcomes_from_log(row, log) if status == "completed" else {}
    return TestRun(
        instance_id=row["instance_id"], status=status, outcomes=outcomes, log=log, seconds=time.monotonic() - started
    )
