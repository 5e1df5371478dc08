"""The run matrix: a YAML file naming suites × scaffolds × models × conditions × repeats, expanded into units.

    suites: [runs/suites/perturb, runs/suites/original]   # suite folders (see suite_format.py)
    # or with a suite's own repeats: [{path: runs/suites/original, repeats: 20}, runs/suites/spt]
    tasks: [my-task-dir, data.jsonl#astropy__astropy-12907]   # ad-hoc tasks, besides or instead of suites
    scaffolds: [mini-swe-agent]
    models: [{name: gpt4o, model: openai/gpt-4o, price_per_million: [2.5, 10]}]
    conditions: [{name: plain}, {name: anchor, anchor: true, hints: structural}]
    repeats: 3
    limits: {steps: 50, cost: 1.0}
    templates: repoanchor  # or mini-swebench: mini-swe-agent's own SWE-bench templates (its units only)
    cost_budget: 20        # USD for the whole matrix; 0 = none
    out: runs/matrix

Relative paths are relative to the YAML file's folder, so a config means the same from any working directory.
One unit is one run: (task, scaffold, model, condition, repeat), with a readable, filesystem-safe id that
is stable across invocations (it names the unit's folder, which is how a rerun finds finished work).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from repoanchor.evals.harness.suite_format import as_task, read_suite_tasks
from repoanchor.evals.harness.task_load import load_task
from repoanchor.evals.harness.tasks import Task, TaskError
from repoanchor.evals.runs.config_errors import error_line
from repoanchor.evals.runs.matrix_entries import Condition, MatrixModel, with_suite_entries
from repoanchor.evals.runs.run_one import ALIASES, RunOptions
from repoanchor.scaffolds.environments.registry import EnvironmentConfig
from repoanchor.scaffolds.mini.templates import TemplatesName
from repoanchor.scaffolds.records import Limits
from repoanchor.scaffolds.registry import SCAFFOLDS

IMPORTED_SCAFFOLDS = ("swe-agent", "openhands")
"""Harnesses whose runs `repoanchor import` brings in: a matrix may name them, nothing here runs them."""
AD_HOC_SUITE = "tasks"
"""The suite label of tasks given directly (`tasks:`), not from a suite folder."""
UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_ID_CHARS = 180  # well under the 255-byte name limit, leaving room for suffixes and tmp names


class MatrixConfigError(ValueError):
    """A config that cannot be used; the message names the file and the field."""


class MatrixConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    suites: list[Path] = []
    """Suite folders (tasks.jsonl + repos/); an entry {path: P, repeats: N} gives that suite its own repeats."""
    suite_repeats: dict[str, Annotated[int, Field(ge=1)]] = {}
    """Repeats of particular suites, by label (folder name), over `repeats`; written as {path, repeats} entries
    in `suites` (Jagged Frontier: the original suite 20 times, each variant once)."""
    tasks: list[str] = []
    """Task directories or DATASET#INSTANCE_ID rows, for ad-hoc matrices."""
    repo_cache: Path | None = None
    """Clones named owner__name, for dataset rows in `tasks`."""
    scaffolds: list[str] = Field(min_length=1)
    models: list[MatrixModel] = Field(min_length=1)
    conditions: list[Condition] = [Condition(name="plain")]
    repeats: int = Field(1, ge=1)
    limits: Limits = Limits()
    templates: TemplatesName = "repoanchor"
    """mini-swe-agent's prompt templates: ours, or `mini-swebench`, its installed SWE-bench ones (see RunOptions).
    Other scaffolds have none: their units keep ours (task.j2), as a paper's protocol runs OpenCode beside mini."""
    environment: EnvironmentConfig = EnvironmentConfig(kind="auto")
    """Where each unit's agent runs; `auto`: a model in its task's environment image, the oracle locally."""
    max_infra_retries: int = Field(2, ge=0)
    """Extra attempts for a unit whose run ended in an infrastructure error."""
    cost_budget: float = Field(0.0, ge=0)
    """USD for the whole matrix (finished units included); no new unit starts once spent. 0 = no budget."""
    workers: int | None = Field(None, ge=1)
    """Units running at once; None = the executor's CPU count."""
    out: Path = Path("runs/matrix")
    preset: dict | None = None
    """The named protocol (`eval --preset`) whose run settings this matrix takes, as `presets show` prints it."""

    @field_validator("scaffolds")
    @classmethod
    def _known_scaffolds(cls, names: list[str]) -> list[str]:
        canonical = [ALIASES.get(name, name) for name in names]
        unknown = [name for name in canonical if name not in SCAFFOLDS and name not in IMPORTED_SCAFFOLDS]
        if unknown:
            raise ValueError(f"unknown scaffold(s) {unknown}; choose from {sorted(SCAFFOLDS) + sorted(ALIASES)}")
        return canonical

    @model_validator(mode="before")
    @classmethod
    def _suite_entries(cls, data):
        return with_suite_entries(data)

    @model_validator(mode="after")
    def _unique_and_nonempty(self) -> MatrixConfig:
        if not self.suites and not self.tasks:
            raise ValueError("give `suites` (suite folders) or `tasks` (task directories / dataset rows)")
        labels = {suite.name for suite in self.suites} | ({AD_HOC_SUITE} if self.tasks else set())
        unknown = sorted(set(self.suite_repeats) - labels)
        if unknown:
            raise ValueError(f"suite_repeats: no suite labelled {unknown} in this matrix (labels: {sorted(labels)})")
        for field, names in (("models", [m.name for m in self.models]), ("conditions", self._condition_names())):
            repeated = [name for name, count in Counter(names).items() if count > 1]
            if repeated:
                raise ValueError(f"{field}: names must be unique, repeated: {repeated}")
        return self

    def repeats_of(self, suite: str) -> int:
        """How many times the units of the suite labelled `suite` run."""
        return self.suite_repeats.get(suite, self.repeats)

    def _condition_names(self) -> list[str]:
        return [condition.name for condition in self.conditions]

    @classmethod
    def load(cls, path: str | Path) -> MatrixConfig:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            reason = " ".join(str(exc).split())  # YAML's errors span lines; ours are one line each
            raise MatrixConfigError(f"{path}: cannot read the config: {reason}") from exc
        if not isinstance(data, dict):
            raise MatrixConfigError(f"{path}: expected a mapping of fields at the top level")
        try:
            config = cls.model_validate(data)
        except ValidationError as exc:
            lines = [error_line(path, error, cls) for error in exc.errors()]
            raise MatrixConfigError("; ".join(lines)) from None
        config = config.relative_to(path.parent)
        for number, condition in enumerate(config.conditions):
            if condition.hints_file and not condition.hints_file.is_file():
                raise MatrixConfigError(f"{path}: conditions.{number}.hints_file: no file {condition.hints_file}")
        return config

    def relative_to(self, base: Path) -> MatrixConfig:
        """Paths in the file are relative to the file's folder."""
        conditions = [
            c.model_copy(update={"hints_file": base / c.hints_file}) if c.hints_file else c for c in self.conditions
        ]
        return self.model_copy(
            update={
                "suites": [base / suite for suite in self.suites],
                "tasks": [_relative_spec(base, spec) for spec in self.tasks],
                "repo_cache": base / self.repo_cache if self.repo_cache else None,
                "conditions": conditions,
                "out": base / self.out,
            }
        )


def _relative_spec(base: Path, spec: str) -> str:
    file, hash_sign, instance = spec.rpartition("#") if "#" in spec else (spec, "", "")
    return f"{base / file}{hash_sign}{instance}"


class Unit(BaseModel):
    """One run of the matrix: everything a worker needs, picklable."""

    unit_id: str
    suite: str
    instance_id: str
    scaffold: str
    model: str
    condition: str
    repeat: int
    task: Task
    options: RunOptions


def load_tasks(config: MatrixConfig) -> list[tuple[str, Task]]:
    """(suite label, task) in file order; ad-hoc tasks get the label "tasks"."""
    found: list[tuple[str, Task]] = []
    try:
        for suite in config.suites:
            found += [(suite.name, as_task(suite, row)) for row in read_suite_tasks(suite)]
        found += [(AD_HOC_SUITE, load_task(spec, repo_cache=config.repo_cache)) for spec in config.tasks]
    except TaskError as exc:
        raise MatrixConfigError(str(exc)) from exc
    return found


def expand(config: MatrixConfig) -> list[Unit]:
    """All units in a deterministic order: repeat first, so a budget stop leaves whole repeats (every
    condition of a task, the pairs paired statistics need) rather than all repeats of a few tasks."""
    tasks = load_tasks(config)
    keys, units = [], []
    for repeat in range(1, max([config.repeats, *config.suite_repeats.values()]) + 1):
        for suite, task in [(suite, task) for suite, task in tasks if repeat <= config.repeats_of(suite)]:
            for scaffold in config.scaffolds:
                for model in config.models:
                    for condition in config.conditions:
                        keys.append((suite, task.instance_id, scaffold, model.name, condition.name, f"r{repeat}"))
                        units.append(_unit(config, suite, task, scaffold, model, condition, repeat))
    for unit, unit_id in zip(units, unit_ids(keys), strict=True):
        unit.unit_id = unit_id
    return units


def _unit(config, suite, task, scaffold, model, condition, repeat) -> Unit:
    options = RunOptions(
        scaffold=scaffold,
        model=model.config(),
        limits=config.limits,
        environment=config.environment,
        anchor=condition.anchor,
        anchor_budget=condition.budget,
        anchor_stage1_tests=condition.stage1_tests,
        templates=config.templates if scaffold == "mini-swe-agent" else "repoanchor",
        hints=condition.hints,
        hints_file=str(condition.hints_file) if condition.hints_file else None,
    )
    return Unit(
        unit_id="",
        suite=suite,
        instance_id=task.instance_id,
        scaffold=scaffold,
        model=model.name,
        condition=condition.name,
        repeat=repeat,
        task=task,
        options=options,
    )


def unit_ids(keys: list[tuple[str, ...]]) -> list[str]:
    """Readable ids; where sanitising or truncation makes two equal, a hash of the raw key tells them apart."""
    readable = [UNSAFE.sub("-", "__".join(key)).strip("-.")[:MAX_ID_CHARS] for key in keys]
    counts = Counter(readable)
    if len(set(keys)) != len(keys):
        raise MatrixConfigError("the matrix names the same run twice (a task listed twice?)")
    return [text if counts[text] == 1 else f"{text}-{_digest(key)}" for text, key in zip(readable, keys, strict=True)]


def _digest(key: tuple[str, ...]) -> str:
    return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:10]
