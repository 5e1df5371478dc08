"""What a family is: a planner (variant + metadata -> erasure, prompt, ground truth) and a checker.

A family module exposes one object with:

- ``name``;
- ``plan(ctx) -> Plan | str``: the erasure to apply, the files the agent may change, the prompt
  and the ground truth; a string is the reason the instance gets no task of this family;
- ``check(worktree, gt, spec) -> list[str]``: the family's dynamic check (empty = passed);
- ``decoy(gt) -> Edit``: a plausible wrong answer the check must reject (self-check).

The ground-truth solution is always ``gt["solution"]`` (files to write, or a patch to apply).
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol

from repoanchor.evals.suites.extend.common import ExtendError
from repoanchor.evals.suites.extend.models import FamiliesConfig, ValidatorSpec
from repoanchor.evals.suites.extend.project_tests import run_project_tests, test_command
from repoanchor.evals.suites.stage_clock import StageClock, timed


@dataclass
class Plan:
    allowed_files: list[str] | None
    prompt: str
    ground_truth: dict
    erase: dict[str, str] = field(default_factory=dict)
    """path -> the content it gets in the agent's repository."""
    needs_tests: bool = True


@dataclass
class BuildContext:
    variant: Path
    """A private copy of the intact variant: plans read it, probes and the baseline tests run in it."""
    source: Path
    """The caller's variant tree: task repositories are copied from it, untouched by any run."""
    metadata: dict
    row: dict
    config: FamiliesConfig
    seed: int | str
    gold_patch: str | None = None
    clock: StageClock | None = None
    """A suite build's clock: the baseline tests count as `tests`."""

    @property
    def instance_id(self) -> str:
        return str(self.row["instance_id"])

    def rng(self, family: str) -> random.Random:
        return random.Random(f"{self.seed}|extend|{family}|{self.instance_id}")

    def entries(self, kind: str) -> list[dict]:
        return [e for e in self.metadata.get("path_resolution_map", []) if e.get("kind") == kind]

    @cached_property
    def test_cmd(self) -> str:
        return test_command(self.config.test_cmd, self.config.python, self.row, self.variant)

    @cached_property
    def baseline_passed(self) -> list[str]:
        """Tests passing on the intact variant: the ones every answer must keep passing."""
        cmd = self.test_cmd
        with timed(self.clock, "tests"):
            outcomes = run_project_tests(self.variant, cmd, self.config)
        passed = sorted(t for t, outcome in outcomes.items() if outcome == "passed")
        if not passed:
            raise ExtendError("no test passes on the intact variant: there is nothing to keep passing")
        return passed


class Family(Protocol):
    name: str

    def plan(self, ctx: BuildContext) -> Plan | str: ...

    def check(self, worktree: Path, gt: dict, spec: ValidatorSpec) -> list[str]: ...

    def decoy(self, gt: dict) -> dict: ...


def apply_edit(worktree: Path, edit: dict) -> None:
    """Write ``edit["files"]`` (path -> text) and apply ``edit["patch"]`` (git apply) in `worktree`."""
    for rel, text in sorted(edit.get("files", {}).items()):
        target = Path(worktree) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    patch = edit.get("patch")
    if patch:
        proc = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-"], cwd=worktree, input=patch.encode(), capture_output=True
        )
        if proc.returncode != 0:
            raise ExtendError(f"patch does not apply: {proc.stderr.decode('utf-8', 'replace')[-800:]}")


def last_line(text: str | None) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""
