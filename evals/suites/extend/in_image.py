"""The families' probes and test runs in a network-less container of the instance's environment image.

Where `settings.image` is set (a FamiliesConfig or ValidatorSpec made from an environment image), the
checkout is copied to /testbed in a fresh container (`container_run.run_in_tree`), the instance's setup
step runs there, then the probe or the tests; their findings come back on standard output between markers,
so nothing is bind-mounted and no code of the answer ever runs on the host. `settings.python` is the
image's interpreter.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from repoanchor.evals.harness.container_run import HOME, run_in_tree
from repoanchor.evals.harness.env_spec import EnvSpec
from repoanchor.evals.harness.eval_script import IMAGE_REPO_DIR
from repoanchor.evals.suites.extend.setup_steps import setup_script
from repoanchor.perturb.validation.testrun import TestRun, junit_command, parse_junit, placed

BEGIN, END, EXIT = "@@repoanchor-begin@@", "@@repoanchor-end@@", "@@repoanchor-exit "
SETUP_FAILED = 97
"""The script's exit code when the setup step failed (nothing else runs then)."""


class InImageError(RuntimeError):
    """The container told us nothing usable: the caller turns it into its own error type."""


def _env(settings) -> EnvSpec:
    return EnvSpec(provider="image", instance_id="extend", route="env-image", image=settings.image)


def _script(settings, command: str, result_file: str) -> str:
    """Setup, then `command`; its exit code and `result_file` printed between markers."""
    setup = setup_script(settings)
    lines = []
    if setup:
        lines.append(
            f"{{ {setup}\n}} > {HOME}/setup.log 2>&1 || {{ tail -c 1200 {HOME}/setup.log; exit {SETUP_FAILED}; }}"
        )
    lines += [
        command,
        "code=$?",
        f"echo; echo '{EXIT}'$code",
        f"echo '{BEGIN}'; cat {shlex.quote(result_file)} 2>/dev/null; echo; echo '{END}'",
    ]
    return "\n".join(lines)


def _variables(settings) -> dict[str, str]:
    paths = [IMAGE_REPO_DIR, f"{IMAGE_REPO_DIR}/src"]
    extra = dict(settings.test_env)
    if extra.get("PYTHONPATH"):
        paths.append(extra["PYTHONPATH"])
    return {**extra, "PYTHONPATH": ":".join(paths)}


def _run(worktree: Path, settings, command: str, result_file: str, timeout: float, files=None) -> tuple[int, str, str]:
    """(exit code, result file's text, output before the markers)."""
    timed_out, output = run_in_tree(
        Path(worktree), _script(settings, command, result_file), _env(settings), timeout,
        files=files, variables=_variables(settings),
    )  # fmt: skip
    if timed_out:
        raise InImageError(f"timed out after {timeout:g}s in {settings.image}: {output[-500:]}")
    head, marker, rest = output.rpartition(EXIT)
    if not marker:  # the script stopped before the command: the setup step failed (its log's tail is printed)
        raise InImageError(f"the instance's install step failed in {settings.image}: {output[-1200:]}")
    code_text, _, tail = rest.partition("\n")
    body = tail.split(BEGIN, 1)[-1].rsplit(END, 1)[0].strip()
    return int(code_text.strip() or -1), body, head


def probe(worktree: Path, spec: dict, roots: set[str], settings, probe_file: Path) -> dict:
    """probe.py's findings on `worktree`, run by the image's Python at /testbed."""
    spec = {
        **spec,
        "root": IMAGE_REPO_DIR,
        "sys_path": [f"{IMAGE_REPO_DIR}/{r}" if r else IMAGE_REPO_DIR for r in sorted(roots)],
    }
    files = {"probe.py": probe_file.read_bytes(), "spec.json": json.dumps(spec).encode()}
    out = f"{HOME}/out.json"
    command = shlex.join([settings.python, "-I", "-B", f"{HOME}/probe.py", f"{HOME}/spec.json", out])
    code, body, log = _run(worktree, settings, command, out, settings.probe_timeout_s, files)
    if code != 0 or not body:
        raise InImageError(f"probe crashed (exit {code}): {log[-1500:]}")
    return json.loads(body)


LogReader = Callable[[str], dict[str, str]]


def project_tests(worktree: Path, cmd: str, settings, read_log: LogReader | None = None) -> TestRun:
    """The test command at /testbed, its junit XML read back, or with `read_log` its output (standard output
    and error together); InImageError when it wrote no junit."""
    result = f"{HOME}/{'test.log' if read_log else 'junit.xml'}"
    command = f"{{ {cmd}\n}} > {result} 2>&1" if read_log else junit_command(cmd, Path(result))
    started = time.monotonic()
    code, body, log = _run(worktree, settings, command, result, settings.test_timeout_s)
    if read_log:
        outcomes = placed(read_log(body), {IMAGE_REPO_DIR})
        return TestRun(IMAGE_REPO_DIR, command, code, time.monotonic() - started, outcomes, body[-4000:], "")
    if not body:
        raise InImageError(f"{command!r} in {settings.image} produced no junit XML (exit {code}): {log[-500:]}")
    with tempfile.TemporaryDirectory(prefix="repoanchor-junit-") as tmp:
        path = Path(tmp) / "junit.xml"
        path.write_text(body, encoding="utf-8")
        outcomes = placed(parse_junit(path), {IMAGE_REPO_DIR})
    return TestRun(IMAGE_REPO_DIR, command, code, time.monotonic() - started, outcomes, log[-4000:], "")
