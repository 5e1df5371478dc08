"""What to run for an instance's tests and how to read the result, following the dataset's own semantics.

The test command comes, in order, from the suite field `repoanchor_test_cmd` (with `{tests}` replaced by
the test files of FAIL_TO_PASS ∪ PASS_TO_PASS), from the row's `eval_script` (the lines SWE-bench puts
between its start/end markers, plus its `export`s), or from swebench 4.1.0's spec `test_cmd` and the test
directives of `test_patch`. Logs are parsed by swebench's own parsers, named by the row's
`repoanchor_log_parser`/`log_parser` (or its `install_config`'s, `instance_spec`) or looked up by repository,
never re-implemented here.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from repoanchor.evals.harness.instance_spec import row_spec, spec_for
from repoanchor.scaffolds.records import InfraError

# The same markers as swebench.harness.constants, so a log written here reads like one written there.
START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
PATCH_APPLY_FAILED = ">>>>> Patch Apply Failed"
TESTS_TIMED_OUT = ">>>>> Tests Timed Out"
IMAGE_REPO_DIR = "/testbed"


def files_under_test(row: dict[str, Any]) -> list[str]:
    """The files holding FAIL_TO_PASS ∪ PASS_TO_PASS (pytest node ids are `file::name`)."""
    return sorted({test.split("::")[0] for test in [*row["FAIL_TO_PASS"], *row["PASS_TO_PASS"]]})


def command_for(row: dict[str, Any], repo_dir: str | Path = IMAGE_REPO_DIR) -> str:
    """The shell lines that run `row`'s tests in a checkout at `repo_dir`."""
    if row.get("repoanchor_test_cmd"):
        return row["repoanchor_test_cmd"].format(tests=" ".join(shlex.quote(f) for f in files_under_test(row)))
    if row.get("eval_script"):
        return from_eval_script(row["eval_script"], str(repo_dir))
    return spec_command(row)


def spec_command(row: dict[str, Any], directives: list[str] | None = None) -> str:
    """swebench's spec `test_cmd` for the row's repo/version, after its `eval_commands`' exports, then
    `directives` (default: swebench's test directives of the row's `test_patch`)."""
    spec = spec_for(row)
    if spec is None:
        raise InfraError(
            "environment_setup",
            f"{row['instance_id']}: no test command: no eval_script, and swebench has no spec for {row['repo']} "
            f"{row.get('version')!r}; give the row an install_config (SWE-rebench's format: python, install, "
            "test_cmd) or an eval_script",
        )
    exports = [line for line in spec.get("eval_commands") or [] if line.startswith("export ")]
    test_cmd = spec["test_cmd"] if isinstance(spec["test_cmd"], str) else spec["test_cmd"][-1]
    if directives is None:  # exactly as swebench reads them
        from swebench.harness.test_spec.python import get_test_directives

        directives = get_test_directives(row)
    return "\n".join([*exports, " ".join([test_cmd, *directives])])


def test_directives(row: dict[str, Any], files: list[str]) -> list[str]:
    """swebench's test directives naming `files` for the row's repository (Django's `tests/a/b.py` is `a.b`;
    files swebench counts as not tests are left out)."""
    from swebench.harness.test_spec.python import get_test_directives

    # get_test_directives reads only the test patch's diff headers.
    return get_test_directives({**row, "test_patch": "".join(f"diff --git a/{f} b/{f}\n" for f in files)})


def patch_files(patch: str) -> list[str]:
    """The files a diff touches, in order (its `diff --git` headers' new paths)."""
    return list(dict.fromkeys(re.findall(r"^diff --git a/.* b/(.*)$", patch or "", re.MULTILINE)))


def from_eval_script(script: str, repo_dir: str) -> str:
    """The test lines of a SWE-bench eval script, with its environment exports, re-rooted at `repo_dir`."""
    lines = script.splitlines()
    start = next((i for i, line in enumerate(lines) if START in line), None)
    end = next((i for i, line in enumerate(lines) if END in line), None)
    if start is None or end is None or end < start:
        raise InfraError("environment_setup", "eval_script has no start/end test-output markers")
    # Exports (LANG, PYTHONIOENCODING...) come from the spec's eval_commands and change test outcomes.
    exports = [line for line in lines[:start] if line.startswith("export ")]
    return "\n".join([*exports, *lines[start + 1 : end]]).replace(IMAGE_REPO_DIR, repo_dir)


def wrap_command(command: str, install: str | None = None) -> str:
    """A bash script that installs the project (outside the markers), then prints the markers around the tests.

    No `set -e`: as in SWE-bench's eval script, a failed install still lets the tests run and show it.
    """
    return (
        f"set -uo pipefail\n{checked_install(install) if install else ':'}\necho '{START}'\n{command}\necho '{END}'\n"
    )


INSTALL_FAILED = "repoanchor: the install step exited with status"
_INSTALL_STATUS = re.compile(re.escape(INSTALL_FAILED) + r" (\d+)")
_EXCEPTION_LINE = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception)\b.*\S", re.MULTILINE)
_ERROR_LINES = (
    re.compile(r"^\s*error: (?![a-z]+(?:-[a-z]+)+\s*$).*\S", re.MULTILINE),
    re.compile(r"^\s*ERROR: .*\S", re.MULTILINE),
)
"""A build tool's `error: ...` line (not pip's summary codes, `error: metadata-generation-failed`), else pip's own
`ERROR: ...` (`Failed building editable for matplotlib` says less than the line before it: freetype's download)."""


def checked_install(install: str) -> str:
    """`install`, then a line saying its exit status where it failed (the tests still run: `wrap_command`)."""
    status = "__repoanchor_install_status"
    return f'{{\n{install}\n}}\n{status}=$?\nif [ "${status}" -ne 0 ]; then echo "{INSTALL_FAILED} ${status}"; fi'


def install_hint(log: str) -> str:
    """ "; ..." saying that the run's install step failed, with the last exception line before it, else "": every
    test then fails for that alone (scikit-learn 0.22 under Cython 3: `CompileError: sklearn/.../_ball_tree.pyx`)."""
    found = _INSTALL_STATUS.search(log)
    if found is None:
        return ""
    searched = (pattern.findall(log, 0, found.start()) for pattern in (_EXCEPTION_LINE, *_ERROR_LINES))
    errors = next((lines for lines in searched if lines), [])
    last = f"; its last error: {errors[-1].strip()[:240]!r}" if errors else ""
    return f"; the instance's install step failed (exit status {found.group(1)}{last})"


def _parsers() -> dict[str, Callable]:
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER
    from swebench.harness.log_parsers import python as python_parsers

    named = {name: fn for name, fn in vars(python_parsers).items() if name.startswith("parse_log_")}
    return {**named, **{fn.__name__: fn for fn in MAP_REPO_TO_PARSER.values()}}


def parser_name(row: dict[str, Any]) -> str | None:
    """The swebench parser for `row`: its `repoanchor_log_parser`/`log_parser`/install_config's, else its
    repository's; None if there is none. A name without the `parse_log_` prefix gets it."""
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER

    name = row.get("repoanchor_log_parser") or row.get("log_parser") or (row_spec(row) or {}).get("log_parser")
    if name:
        return name if name.startswith("parse_log_") else f"parse_log_{name}"
    found = MAP_REPO_TO_PARSER.get(row.get("repo"))
    return found.__name__ if found else None


def log_parser(row: dict[str, Any]) -> Callable[[str], dict[str, str]]:
    """`log -> {test id: status}` for `row`, from swebench's parsers."""
    name = parser_name(row)
    parser = _parsers().get(name) if name else None
    if parser is None:
        raise InfraError("grading", f"{row['instance_id']}: no swebench log parser {name or row['repo']!r}")
    # Parsers take a TestSpec; the Python ones ignore it and the others read only these fields.
    spec = SimpleNamespace(instance_id=row["instance_id"], repo=row["repo"], version=row.get("version"))
    return lambda log: parser(log, spec)


def output_section(log: str) -> str | None:
    """The part of `log` between the markers, or None when the tests did not run to the end marker."""
    if PATCH_APPLY_FAILED in log or TESTS_TIMED_OUT in log or START not in log or END not in log:
        return None
    return log.split(START, 1)[1].split(END, 1)[0]
