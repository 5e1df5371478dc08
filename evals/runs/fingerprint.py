"""What shapes a unit's result, as digests: a finished unit is reused only while all of them are unchanged.

A unit id names the task, scaffold, model, condition and repeat; its result also depends on the run options
(temperature, API base, limits, environment, anchor budget), the prompt templates, a hints file's content,
the suite as built (its manifest) and the tools' versions. Each of these is one component of the fingerprint
recorded in result.json, so a resumed matrix can say which one changed instead of silently mixing old and
new results.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from repoanchor import prompts
from repoanchor.evals.harness.suite_format import MANIFEST_FILE, TASKS_FILE
from repoanchor.perturb.metadata import tool_version
from repoanchor.scaffolds.opencode.setup import OPENCODE_VERSION

PROMPTS = prompts.HERE
"""Every shipped template: the scaffolds' system prompts, the task, anchor stages, hints and Extend prompts."""


def digest(value) -> str:
    data = value if isinstance(value, bytes) else json.dumps(value, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:16]


LATER_OPTIONS = {"templates": "repoanchor", "anchor_stage1_tests": "allowed"}
"""RunOptions fields added after results were first fingerprinted: left out at their default, so a result made
before one existed keeps its fingerprint; set otherwise, they change it."""


def options_digest(options) -> str:
    data = options.model_dump(mode="json", exclude={"instruction_cache"})
    for name, default in LATER_OPTIONS.items():
        if data.get(name) == default:
            del data[name]
    return digest(data)


def _file_digest(path: Path) -> str:
    """Read every time: a file edited between two runs of one process must count as changed."""
    return digest(path.read_bytes()) if path.is_file() else "missing"


def prompts_digest() -> str:
    templates = sorted(PROMPTS.rglob("*.j2"))
    return digest(b"".join(p.relative_to(PROMPTS).as_posix().encode() + p.read_bytes() for p in templates))


@cache
def _tools() -> str:
    def package(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    names = ("mini-swe-agent", "litellm")
    return digest({"repoanchor": tool_version(), **{n: package(n) for n in names}, "opencode": OPENCODE_VERSION})


def suite_digest(suite: Path) -> str:
    """The suite as built: its manifest (which hashes every task's tree and ground truth), else its task table."""
    manifest = Path(suite) / MANIFEST_FILE
    return _file_digest(manifest if manifest.is_file() else Path(suite) / TASKS_FILE)


def fingerprints(units: list, suites: list[Path]) -> dict[str, dict[str, str]]:
    """{unit id: {component: digest}} of matrix Units, every file read once, now."""
    shared = {"prompts": prompts_digest(), "tools": _tools()}
    by_suite = {Path(suite).name: suite_digest(suite) for suite in suites}
    hints = {path: _file_digest(Path(path)) for path in {u.options.hints_file for u in units} if path}
    return {
        unit.unit_id: {
            "options": options_digest(unit.options),
            "prompts": shared["prompts"],
            "hints_file": hints.get(unit.options.hints_file, "none"),
            "task": digest(unit.task.model_dump(mode="json", exclude={"repo"})),  # its tree: in the suite's manifest
            "suite": by_suite.get(unit.suite, "none"),
            "tools": shared["tools"],
        }
        for unit in units
    }


def changed(recorded: dict | None, current: dict[str, str]) -> list[str]:
    """The components that differ; every one when nothing was recorded (a result of an older version)."""
    if not recorded:
        return ["fingerprint (none recorded)"]
    return [name for name, value in current.items() if recorded.get(name) != value]


class StaleResults(ValueError):
    """Finished units whose fingerprint differs from what this config would run now."""


def refuse_stale(out: Path, results: dict[str, dict], prints: dict[str, dict[str, str]]) -> None:
    """Reusing a result made with other settings would mix two experiments in one table: refuse, saying what
    changed, unless the caller asked to redo everything."""
    stale = {unit_id: changed(record.get("fingerprint"), prints[unit_id]) for unit_id, record in results.items()}
    stale = {unit_id: parts for unit_id, parts in stale.items() if parts}
    if not stale:
        return
    counts = Counter(part for parts in stale.values() for part in parts)
    what = ", ".join(f"{part} ({count} unit{'s' if count > 1 else ''})" for part, count in sorted(counts.items()))
    raise StaleResults(
        f"{len(stale)} finished unit(s) in {out} were made with other settings; changed: {what}; "
        f"e.g. {next(iter(stale))}. Rerun with --redo to run everything again, or use another out folder"
    )
