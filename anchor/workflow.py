"""The RepoAnchor two-stage workflow: explore and write INSTRUCTION.md, then solve anchored on it.

Stage 1 runs the scaffold with the anchor prompt in the run's environment. Afterwards every change
except INSTRUCTION.md is reverted and recorded as a violation, and INSTRUCTION.md is checked; a missing
or malformed file gets one more stage-1 run with the problems as feedback. Stage 2 is a fresh scaffold
run on the same environment state with the task plus the file's content. The final patch is taken
with INSTRUCTION.md removed, so it never enters the submission.

What happens when stage 1 does not deliver (documented policy, recorded as `anchor_status`):
- `ok` / `ok_after_retry`: stage 2 runs.
- `missing` / `empty` / `malformed`: no acceptable file after the retry; stage 2 does not run (an anchor
  failure).
- `stage1_limits`: stage 1 hit a step, cost or time limit without an acceptable file; no retry (the budget
  is spent) and stage 2 does not run. With an acceptable file despite the limit, stage 2 runs.
- `stage1_infra`: the model server or environment failed; nothing more runs (an infrastructure error).

Budgets (`budget`): `separate` gives each stage run the full limits (stage 1, its retry and stage 2 can
spend up to three times a plain run's). `shared` makes them spend one set of limits, a plain run's: each
stage run gets what the earlier ones left of the steps, cost and wall time (a run with no recorded cost
spends none of the cost limit). When nothing is left for the retry or for stage 2, it does not run and the
unit ends as `LimitsExceeded`, as a plain run at its limits would. `stage_limits` records what each got.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from repoanchor import prompts
from repoanchor.anchor.cache import InstructionCache
from repoanchor.anchor.guard import revert_violations
from repoanchor.anchor.instruction import FILENAME, REQUIRED_SECTIONS, check_instruction
from repoanchor.anchor.stage1_tests import find_test_runs
from repoanchor.scaffolds.environments.local import Environment
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.records import Limits, RunRecord

STAGE1_TEMPLATES = ("anchor_stage1", "anchor_retry")


class AnchoredRecord(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    anchor_status: str
    """ok | ok_after_retry | cached | missing | empty | malformed | stage1_limits | stage1_infra"""
    problems: list[str] = []
    """Why INSTRUCTION.md was rejected (last attempt), when it was."""
    violations: list[dict] = []
    """Changes stage 1 made outside INSTRUCTION.md, per attempt: {attempt, path, change}; all reverted."""
    stage1: list[RunRecord] = []
    stage2: RunRecord | None = None
    instruction: str | None = None
    patch: str = ""
    """The final patch, INSTRUCTION.md excluded."""
    exit_status: str | None = None
    infra_error: str | None = None
    steps: int = 0
    cost: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    wall_seconds: float = 0.0
    budget: Literal["separate", "shared"] = "separate"
    stage_limits: list[dict] = []
    """The limits each stage run was given, in order: {stage, steps, cost, wall_seconds}."""
    stage1_tests: Literal["allowed", "forbidden"] = "allowed"
    """`forbidden` (the RepoMirage paper's rule): each stage-1 test run is a violation (`change: test-run`)."""

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / "anchored.json.tmp"
        temporary.write_text(self.model_dump_json(indent=1), encoding="utf-8")
        return temporary.replace(folder / "anchored.json")


def read_instruction(env: Environment) -> str | None:
    result = env.execute(f"test -f {FILENAME} && cat {FILENAME}", timeout=60)
    return result.output if result.returncode == 0 else None


def stage1_prompt(
    task: str, hints: str, workdir: str, problems: list[str] | None = None, tests_forbidden: bool = False
) -> str:
    common = {"instruction_file": FILENAME, "sections": REQUIRED_SECTIONS}
    stage = {"task": task, "hints": hints, "workdir": workdir, "tests_forbidden": tests_forbidden}
    prompt = prompts.render("anchor_stage1", **stage, **common)
    if problems:
        prompt += "\n" + prompts.render("anchor_retry", problems=problems, **common)
    return prompt


def stage2_prompt(task: str, hints: str, workdir: str, instruction: str) -> str:
    return prompts.render("anchor_stage2", task=task, hints=hints, workdir=workdir, instruction=instruction)


def _failure_status(problems: list[str]) -> str:
    if f"{FILENAME} was not written" in problems:
        return "missing"
    return "empty" if f"{FILENAME} is empty" in problems else "malformed"


def _hit_limit(record: RunRecord) -> bool:
    return record.exit_status in ("LimitsExceeded", "TimeExceeded")


def stage_budget(limits: Limits, result: AnchoredRecord, stage: str) -> Limits | None:
    """The limits the next stage run gets (recorded on `result`); None when a shared budget is spent."""
    if result.budget == "shared":
        spent = [*result.stage1, *([result.stage2] if result.stage2 else [])]
        left = {
            "steps": limits.steps - sum(run.steps for run in spent),
            "cost": limits.cost - sum(run.cost or 0.0 for run in spent),
            "wall_seconds": limits.wall_seconds - sum(run.wall_seconds for run in spent),
        }
        # 0 means "no limit" in Limits: a limit that was set and is used up stops here, it never becomes 0.
        if any(getattr(limits, name) > 0 and value <= 0 for name, value in left.items()):
            return None
        limits = limits.model_copy(update={n: v for n, v in left.items() if getattr(limits, n) > 0})
    given = limits.model_dump(include={"steps", "cost", "wall_seconds"})
    result.stage_limits.append({"stage": stage, **given})
    return limits


def run_stage1(scaffold, task, env, model, limits, out: Path, hints: str, result: AnchoredRecord) -> str | None:
    """Up to two stage-1 runs; returns an accepted INSTRUCTION.md text or None (status set on `result`)."""
    problems: list[str] | None = None
    for attempt in (1, 2):
        given = stage_budget(limits, result, f"stage1-{attempt}")
        if given is None:
            result.anchor_status, result.exit_status = "stage1_limits", "LimitsExceeded"
            return None
        forbidden = result.stage1_tests == "forbidden"
        prompt = stage1_prompt(task, hints, env.workdir, problems, tests_forbidden=forbidden)
        record = scaffold.run(prompt, env, model, given, out / f"stage1-{attempt}")
        result.stage1.append(record)
        result.violations += [{"attempt": attempt, **v} for v in revert_violations(env, env.base)]
        if forbidden:  # a test run cannot be undone: it is recorded
            result.violations += [{"attempt": attempt, **v} for v in find_test_runs(record, out / f"stage1-{attempt}")]
        if record.infra_error:
            result.anchor_status, result.infra_error = "stage1_infra", record.infra_error
            return None
        check = check_instruction(read_instruction(env))
        if check.ok:
            result.anchor_status, result.problems = ("ok" if attempt == 1 else "ok_after_retry"), []
            return read_instruction(env)
        problems = result.problems = check.problems
        result.anchor_status = _failure_status(problems)
        if _hit_limit(record):
            result.anchor_status = "stage1_limits"
            return None
    return None


def run_anchored(
    scaffold,
    task: str,
    env: Environment,
    model: ModelConfig,
    limits: Limits,
    out: Path,
    *,
    hints: str = "",
    stage1_limits: Limits | None = None,
    cache: InstructionCache | None = None,
    budget: Literal["separate", "shared"] = "separate",
    stage1_tests: Literal["allowed", "forbidden"] = "allowed",
) -> AnchoredRecord:
    """Both stages in `env`; writes `out/anchored.json`, `out/INSTRUCTION.md` and each stage's run folder."""
    out.mkdir(parents=True, exist_ok=True)
    result = AnchoredRecord(anchor_status="missing", budget=budget, stage1_tests=stage1_tests)
    rule = hints if stage1_tests == "allowed" else f"{hints}\n[stage1_tests={stage1_tests}]"  # another prompt
    templates = getattr(scaffold, "templates", None)  # mini's own templates: another system prompt
    rule += f"\n[templates={templates.describe()}]" if templates and templates.name != "repoanchor" else ""
    key = cache.key(env, model.model, prompts.prompt_version(*STAGE1_TEMPLATES), rule, task) if cache else None
    instruction = cache.get(key) if cache else None
    if instruction is not None:
        result.anchor_status = "cached"
        env.execute(f"cat > {FILENAME} <<'REPOANCHOR_EOF'\n{instruction}\nREPOANCHOR_EOF", timeout=60)
    else:
        instruction = run_stage1(scaffold, task, env, model, stage1_limits or limits, out, hints, result)
        if instruction is not None and cache:
            cache.put(key, instruction)
    result.instruction = instruction
    given = stage_budget(limits, result, "stage2") if instruction is not None else None
    if instruction is not None:
        (out / FILENAME).write_text(instruction, encoding="utf-8")
    if given is not None:
        prompt = stage2_prompt(task, hints, env.workdir, instruction)
        result.stage2 = scaffold.run(prompt, env, model, given, out / "stage2")
        result.exit_status, result.infra_error = result.stage2.exit_status, result.stage2.infra_error
    elif instruction is not None:  # a shared budget stage 1 used up: stage 2 has nothing left to run on
        result.exit_status = "LimitsExceeded"
    env.execute(f"rm -f {FILENAME}", timeout=60)
    result.patch = env.patch()
    _totals(result)
    result.save(out)
    return result


def _totals(result: AnchoredRecord) -> None:
    stages = [*result.stage1, *([result.stage2] if result.stage2 else [])]
    result.steps = sum(stage.steps for stage in stages)
    result.wall_seconds = sum(stage.wall_seconds for stage in stages)
    for field in ("cost", "input_tokens", "output_tokens"):
        known = [getattr(stage, field) for stage in stages if getattr(stage, field) is not None]
        setattr(result, field, sum(known) if known else None)
