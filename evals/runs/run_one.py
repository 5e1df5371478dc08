"""One task, one scaffold, one model: a plain run or the two-stage RepoAnchor run, into one folder.

The library behind `repoanchor run`. The environment (a standalone checkout or a container of the task's repository
at its base commit) is created here and removed afterwards; the run folder keeps run.json (or
anchored.json), the trajectories, the prompt text actually sent, and the patch as `patch.diff`.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from repoanchor import prompts
from repoanchor.anchor.cache import InstructionCache
from repoanchor.anchor.workflow import run_anchored
from repoanchor.evals.harness.tasks import Task
from repoanchor.scaffolds.environments.registry import EnvironmentConfig, open_environment
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.records import Limits
from repoanchor.scaffolds.registry import SCAFFOLDS

ALIASES = {"mini": "mini-swe-agent"}


class RunOptions(BaseModel):
    scaffold: str = "mini-swe-agent"
    model: ModelConfig
    limits: Limits = Limits()
    environment: EnvironmentConfig = EnvironmentConfig()
    anchor: bool = False
    hints: str = "none"
    hints_file: str | None = None
    instruction_cache: Path | None = None


def scaffold_for(name: str):
    name = ALIASES.get(name, name)
    if name not in SCAFFOLDS:
        raise ValueError(f"unknown scaffold {name!r}; choose one of {sorted(SCAFFOLDS) + sorted(ALIASES)}")
    return SCAFFOLDS[name]()


def run_task(task: Task, options: RunOptions, out: Path) -> dict:
    """Run `task` as `options` say; returns the summary also written to `out/summary.json`."""
    scaffold = scaffold_for(options.scaffold)
    hint_text = prompts.hints(options.hints, options.hints_file)
    out.mkdir(parents=True, exist_ok=True)
    # OpenCode runs inside the container: its binary and the model relay's socket are mounted there.
    mounts = scaffold.mounts() if options.environment.kind == "docker" and hasattr(scaffold, "mounts") else None
    with open_environment(options.environment, task.repo, task.base_commit, mounts=mounts) as env:
        if options.anchor:
            cache = InstructionCache(options.instruction_cache) if options.instruction_cache else None
            record = run_anchored(
                scaffold, task.problem_statement, env, options.model, options.limits, out, hints=hint_text, cache=cache
            )
            status = {"anchor_status": record.anchor_status}
        else:
            prompt = prompts.render("task", task=task.problem_statement, hints=hint_text, workdir=env.workdir)
            record = scaffold.run(prompt, env, options.model, options.limits, out)
            status = {}
    (out / "patch.diff").write_text(record.patch, encoding="utf-8")
    summary = {
        "instance_id": task.instance_id,
        "scaffold": scaffold.name,
        "model": options.model.model,
        "environment": options.environment.kind,
        "condition": ("anchor" if options.anchor else "plain") + f"+hints:{options.hints_file or options.hints}",
        **status,
        "exit_status": record.exit_status,
        "infra_error": record.infra_error,
        "steps": record.steps,
        "cost": record.cost,
        "input_tokens": record.input_tokens,
        "output_tokens": record.output_tokens,
        "wall_seconds": round(record.wall_seconds, 3),
        "patch_lines": len(record.patch.splitlines()),
    }
    temporary = out / "summary.json.tmp"
    temporary.write_text(json.dumps(summary, indent=1), encoding="utf-8")
    temporary.replace(out / "summary.json")
    return summary
