"""Run a project's test command once and read per-test outcomes from the junit XML it writes.

Outcomes come from junit XML because exit codes and summaries hide which tests moved. The XML,
output captures and every other by-product live in a temp dir: nothing is written into the tree.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from repoanchor.perturb.validation.isolation import offline_command, untrusted_env

# When one test id appears in several <testcase> elements (pytest writes a second one for a
# teardown error), the worst outcome wins so that no failure is ever hidden by a pass.
SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_CHILD_OUTCOME = {"skipped": "skipped", "failure": "failed", "error": "error"}
TAIL_CHARS = 4000
TREE_MARK = "<tree>"
HASH_SEED = "1"
"""Every run's PYTHONHASHSEED unless the caller's environment or `env_extra` sets one: one iteration order of sets
and dicts of strings in every run, so a test parametrized over a set (isodate's `TEST_CASES = {(4, "19", ...), ...}`)
keeps its ids from run to run; with a random seed each run numbered them anew and 148 of isodate's 280 tests were
flaky, never compared. Non-zero: the interpreter still reports hash randomization on."""
_PYTEST = re.compile(r"(?:^|[\s/])(?:py\.test|pytest)(?:\s|$)")
_SHELL_SEPARATOR = re.compile(r"&&|\|\||[;|\n]")
# pytest's config files: these always count; the others only with a pytest section.
_ALWAYS_CONFIG = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini")
_CONFIG_SECTION = {
    "pyproject.toml": r"^\[tool\.pytest(\.ini_options)?\]",
    "tox.ini": r"^\[pytest\]",
    "setup.cfg": r"^\[tool:pytest\]",
}
_CLOSERS = ("&", ")", "`", "\\")
"""A command ending in one of these ends in a background job, a subshell or an escape."""
_CHOOSES_OWN_SETUP = re.compile(r"(?:^|\s)(?:-c|--config-file|--rootdir|--confcutdir|cd)(?:[\s=]|$)")


class InfrastructureError(RuntimeError):
    """A test run we could not observe (no junit, unreadable junit, timeout, no tests).

    Kept apart from test failures: a run that told us nothing must never read as "all passed",
    and a caller must be able to tell "the variant broke a test" from "the harness broke".
    """


@dataclass(frozen=True)
class TestRun:
    """One execution of the test command: per-test outcomes plus what is needed to debug it."""

    __test__ = False  # not a pytest test class, despite the name

    tree: str
    command: str
    exit_code: int
    duration: float
    outcomes: dict[str, str]
    stdout_tail: str
    stderr_tail: str


def junit_command(test_cmd: str, junit: Path, tree: Path | None = None) -> str:
    """Where the junit path goes: `{junit}` if given, else appended to a trailing pytest call.

    Only the last simple command is inspected, because appended options land there; anything
    else would silently pass the options to the wrong program.
    """
    if "{junit}" in test_cmd:
        return test_cmd.replace("{junit}", shlex.quote(str(junit)))
    command = test_cmd.rstrip()  # a YAML block's trailing newline
    last = _SHELL_SEPARATOR.split(command)[-1]
    if _PYTEST.search(last) and not command.endswith(_CLOSERS) and _calls_pytest(last):
        # no:cacheprovider: pytest would otherwise write .pytest_cache into the tree.
        xml = shlex.quote(str(junit))
        return f"{command} --junitxml={xml} -p no:cacheprovider{_pytest_isolation(command, tree)}"
    raise ValueError(
        f"cannot tell where junit XML goes in {test_cmd!r}: it does not end in a plain pytest call (options added "
        "at its end would land in a subshell, a quoted `sh -c`, a comment or a background job); put {junit} where "
        "the runner expects the XML path (e.g. 'tox -- --junitxml={junit}'); unittest and doctest suites run under "
        "pytest too ('python -m pytest -q tests', '--doctest-modules'), which writes it"
    )


def _calls_pytest(command: str) -> bool:
    """Whether a word of `command` is pytest itself (not text inside a quoted `sh -c '...'`), with no comment
    that would swallow options added at its end."""
    try:
        words, uncommented = shlex.split(command), shlex.split(command, comments=True)
    except ValueError:
        return False
    return words == uncommented and any(word.rsplit("/", 1)[-1] in ("pytest", "py.test") for word in words)


def has_pytest_config(folder: Path) -> bool:
    """Whether pytest's upward search for a config file stops at `folder` (section headers, not parsed)."""
    if any((folder / name).is_file() for name in _ALWAYS_CONFIG):
        return True
    return any(
        (folder / name).is_file() and re.search(header, (folder / name).read_text("utf-8", "replace"), re.MULTILINE)
        for name, header in _CONFIG_SECTION.items()
    )


def _pytest_isolation(test_cmd: str, tree: Path | None) -> str:
    """Options that keep pytest from adopting the config of a project the tree happens to sit in.

    Without a config of its own, pytest climbs out of the tree and takes the first ancestor's:
    its addopts and testpaths, its conftests, and the rootdir that test ids are relative to, so
    a tree kept inside another project would not even share test ids with its copy elsewhere.
    Left alone when the command picks its own config or directory.
    """
    if tree is None or has_pytest_config(tree) or _CHOOSES_OWN_SETUP.search(test_cmd):
        return ""
    if not any(has_pytest_config(parent) for parent in tree.parents):
        return ""
    quoted = shlex.quote(str(tree))
    return f" -c /dev/null --rootdir={quoted} --confcutdir={quoted}"


def _env(tree: Path, home: Path, env_extra: dict[str, str] | None) -> dict[str, str]:
    """Untrusted code's environment (see isolation.py) that imports the tree's code first, writes no bytecode into
    it and hashes strings with `HASH_SEED`; `env_extra` on top (its PYTHONPATH after the tree's)."""
    extra = {"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", HASH_SEED), **(env_extra or {})}
    paths = [str(tree)] + ([str(tree / "src")] if (tree / "src").is_dir() else [])
    if extra.get("PYTHONPATH"):
        paths.append(extra["PYTHONPATH"])
    return untrusted_env(home, {**extra, "PYTHONPATH": os.pathsep.join(paths)})


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the shell and everything it started: a shell=True timeout otherwise orphans pytest."""
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _tail(path: Path) -> str:
    return path.read_bytes()[-TAIL_CHARS:].decode("utf-8", "replace")


def run_tests(
    tree: Path, test_cmd: str, *, timeout: float, env_extra: dict[str, str] | None = None,
    read_log: Callable[[str], dict[str, str]] | None = None,
) -> TestRun:  # fmt: skip
    """Run `test_cmd` in `tree` and read per-test outcomes from junit XML written outside the tree, or,
    with `read_log`, from the run's whole output (standard output and error interleaved, as a log parser
    of SWE-bench's reads it: Django's runner and SymPy's write no junit)."""
    given, tree = str(tree), Path(tree).resolve()
    with tempfile.TemporaryDirectory(prefix="repoanchor-tests-") as tmp:
        junit, out, err = Path(tmp) / "junit.xml", Path(tmp) / "stdout", Path(tmp) / "stderr"
        command = test_cmd if read_log else junit_command(test_cmd, junit, tree)
        argv, note = offline_command(command)
        start = time.monotonic()
        with out.open("wb") as stdout, err.open("wb") as stderr:
            log = stdout if read_log else stderr  # a log parser reads both streams as one
            log.write(note.encode())
            log.flush()
            io = {"stdin": subprocess.DEVNULL, "stdout": stdout, "stderr": subprocess.STDOUT if read_log else stderr}
            env = _env(tree, Path(tmp) / "home", env_extra)
            proc = subprocess.Popen(argv, cwd=tree, env=env, start_new_session=True, **io)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                _kill_group(proc)  # also stops background children that could keep writing
        duration = time.monotonic() - start
        tails = _tail(out), _tail(err)
        where = f"{tree}: {command!r}"
        if code is None:
            raise InfrastructureError(f"{where} timed out after {timeout:g}s; output: {(tails[1] or tails[0])[-500:]}")
        if read_log:
            found = read_log(out.read_bytes().decode("utf-8", "replace"))
        elif junit.is_file():
            found = parse_junit(junit)
        else:
            raise InfrastructureError(f"{where} produced no junit XML (exit {code}); stderr: {tails[1][-500:]}")
        outcomes = placed(found, {str(tree), str(Path(given).absolute())})
    return TestRun(str(tree), command, code, duration, outcomes, *tails)


def placed(outcomes: dict[str, str], trees: set[str]) -> dict[str, str]:
    """Outcomes with the checkout's own path in a test id written as TREE_MARK: a test parametrized by a
    file's absolute path (requests' `test_unzipped_paths_unchanged[/tmp/x/tests/test_utils.py]`) is the
    same test in every checkout of the same code. Ids that become equal keep the worst outcome."""
    found: dict[str, str] = {}
    for test_id, outcome in outcomes.items():
        for tree in sorted(trees, key=len, reverse=True):
            test_id = test_id.replace(tree, TREE_MARK)
        if SEVERITY[outcome] >= SEVERITY[found.get(test_id, "passed")]:
            found[test_id] = outcome
    return found


def parse_junit(path: Path) -> dict[str, str]:
    """{classname::name: outcome} over every <testcase>, however deeply the suites nest."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise InfrastructureError(f"unreadable junit XML {path}: {exc}") from exc
    outcomes: dict[str, str] = {}
    for case in root.iter("testcase"):
        test_id = "::".join(part for part in (case.get("classname"), case.get("name")) if part)
        outcome = _case_outcome(case)
        if SEVERITY[outcome] >= SEVERITY[outcomes.get(test_id, "passed")]:
            outcomes[test_id] = outcome
    return outcomes


def _case_outcome(case: ET.Element) -> str:
    """A <testcase> passed unless it holds a failure, error or skipped element (pytest may write two)."""
    return max((_CHILD_OUTCOME.get(child.tag, "passed") for child in case), key=SEVERITY.get, default="passed")
