"""The project's own tests in a family's checkout: which command, how its outcomes are read, what they must keep.

Two forms. Where the instance's test ids are pytest node ids (`path::name`), the command is pytest on those
ids' files (`{tests}`) and outcomes come from junit XML. Where they are not (Django's `test_x (app.tests.C)`,
SymPy's bare `test_x`), the command is swebench's spec command on the instance's test files that exist
before its test patch (`{directives}`), and outcomes come from swebench's log parser for the repository
(`test_log_parser`), as SWE-bench itself reads them.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

from repoanchor.evals.harness import eval_script
from repoanchor.evals.harness.instance_spec import spec_for
from repoanchor.evals.suites.extend import in_image
from repoanchor.evals.suites.extend.common import ExtendError, installed, python_first_on_path
from repoanchor.perturb.validation.testrun import InfrastructureError, run_tests

PYTEST_TEST_CMD = "{python} -m pytest -p no:cacheprovider {tests}"
"""The families' tests in a suite: the instance's own test files (those its FAIL_TO_PASS and PASS_TO_PASS
name), as SWE-bench runs them, not the whole project's suite (pytest's own takes an hour and more);
`--extend '{"test_cmd": ...}'` overrides it."""

# swebench's TestStatus values in the junit vocabulary the families compare (an xfail is not a pass there).
_STATUS = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped", "XFAIL": "skipped"}


def suite_test_settings(row: dict) -> dict[str, str | None]:
    """`test_cmd` and `test_log_parser` for an instance's families: pytest and junit where its test ids are
    node ids, else swebench's spec command (its `eval_commands`' exports included) and the repository's log
    parser."""
    ids = test_ids(row)
    if not ids or any("::" in test for test in ids):
        return {"test_cmd": PYTEST_TEST_CMD, "test_log_parser": None}
    parser = eval_script.parser_name(row)
    if parser is None or spec_for(row) is None:
        raise ExtendError(
            f"the instance's test ids are not pytest node ids (e.g. {ids[0]!r}) and swebench has no "
            f"{'log parser' if parser is None else 'spec'} for {row.get('repo')!r} version {row.get('version')!r}: "
            """give --extend '{"test_cmd": "...", "test_log_parser": "parse_log_..."}'"""
        )
    return {"test_cmd": eval_script.spec_command(row, ["{directives}"]), "test_log_parser": parser}


def test_command(template: str, python: str, row: dict, tree: Path) -> str:
    """The test command for `tree`: `{python}` is the variant's Python; `{tests}` the instance's test files
    named by its PASS_TO_PASS and FAIL_TO_PASS ids (``path::name``), `{directives}` swebench's test
    directives of the files its test patch touches; either only for files present in the tree (a test
    file the test patch adds is not there), to bound the run on large projects."""
    command = template.replace("{python}", shlex.quote(python))
    if "{tests}" in command:
        named = sorted({t.split("::")[0] for t in test_ids(row)})
        files = _present(named, tree, "its PASS_TO_PASS and FAIL_TO_PASS ids")
        command = command.replace("{tests}", " ".join(map(shlex.quote, files)))
    if "{directives}" in command:
        files = _present(eval_script.patch_files(row.get("test_patch") or ""), tree, "its test patch")
        command = command.replace("{directives}", " ".join(map(shlex.quote, eval_script.test_directives(row, files))))
    return command


def _present(files: list[str], tree: Path, where: str) -> list[str]:
    present = [f for f in files if f.endswith(".py") and (tree / f).is_file()]
    if not present:
        raise ExtendError(f"the test command names the instance's test files, but {where} name none in the tree")
    return present


def test_ids(row: dict) -> list[str]:
    """FAIL_TO_PASS and PASS_TO_PASS, read from SWE-bench's JSON text or lists."""
    found = []
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        value = row.get(key)
        if isinstance(value, str):
            value = json.loads(value) if value.strip() else []
        found += [str(v) for v in value or []]
    return found


def log_reader(parser: str) -> Callable[[str], dict[str, str]]:
    """`log -> {test id: outcome}` by swebench's parser `parser`, outcomes in the junit vocabulary."""
    parse = eval_script.log_parser({"instance_id": "extend", "repo": "", "repoanchor_log_parser": parser})
    return lambda log: {test: _STATUS.get(status, "error") for test, status in parse(log).items()}


def run_project_tests(worktree: Path, cmd: str, settings) -> dict[str, str]:
    """Per-test outcomes of the project's suite in `worktree` (ExtendError if nothing was observed).

    `settings` (a FamiliesConfig or a ValidatorSpec): `test_env`, `test_timeout_s`, `test_log_parser` and
    the setup step. On the host the variant's Python comes first on PATH, as in its install step (an image's
    own PATH starts with its venv)."""
    read_log = log_reader(settings.test_log_parser) if settings.test_log_parser else None
    try:
        if settings.image:
            run = in_image.project_tests(Path(worktree), cmd, settings, read_log)
        else:
            with installed(Path(worktree), settings):
                env = {**settings.test_env, "PATH": python_first_on_path(settings.python)}
                timeout = settings.test_timeout_s
                run = run_tests(Path(worktree), cmd, timeout=timeout, env_extra=env, read_log=read_log)
    except (InfrastructureError, in_image.InImageError) as exc:
        raise ExtendError(f"tests could not run: {exc}") from exc
    if not run.outcomes:
        output = run.stderr_tail or run.stdout_tail
        raise ExtendError(f"tests ran but reported nothing (exit {run.exit_code}): {output[-800:]}")
    return run.outcomes


def tests_reasons(outcomes: dict[str, str], baseline_passed: list[str]) -> list[str]:
    """A test that passed on the intact variant and does not pass now."""
    broken = [t for t in baseline_passed if outcomes.get(t) != "passed"]
    if not broken:
        return []
    shown = ", ".join(f"{t} ({outcomes.get(t, 'missing')})" for t in broken[:8])
    return [f"tests: {len(broken)} test(s) that pass on the intact repository no longer pass: {shown}"]
