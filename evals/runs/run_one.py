"""One task, one scaffold, one model: a plain run or the two-stage RepoAnchor run, into one folder.

The library behind `repoanchor run`. The environment (a standalone checkout or a container of the task's repository
at its base commit) is created here and removed afterwards; the run folder keeps run.json (or
anchored.json), the trajectories, the prompt text actually sent, and the patch as `patch.diff`.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from repoanchor import prompts
from repoanchor.anchor.cache import InstructionCache
from repoanchor.anchor.workflow import run_anchored
from repoanchor.evals.harness.container_run import env_image_spec
from repoanchor.evals.harness.eval_script import IMAGE_REPO_DIR
from repoanchor.evals.harness.tasks import Task, TaskError
from repoanchor.scaffolds.environments.docker_container import BASE_IMAGE
from repoanchor.scaffolds.environments.registry import EnvironmentConfig, open_environment
from repoanchor.scaffolds.mini.templates import TemplatesName, template_set
from repoanchor.scaffolds.models.credentials import refuse_missing_credentials
from repoanchor.scaffolds.models.model import ModelConfig, redact
from repoanchor.scaffolds.models.pricing import refuse_unpriced
from repoanchor.scaffolds.records import InfraError, Limits, RunRecord
from repoanchor.scaffolds.registry import SCAFFOLDS

ALIASES = {"mini": "mini-swe-agent"}


class RunOptions(BaseModel):
    scaffold: str = "mini-swe-agent"
    model: ModelConfig
    limits: Limits = Limits()
    environment: EnvironmentConfig = EnvironmentConfig(kind="auto")
    anchor: bool = False
    anchor_budget: Literal["separate", "shared"] = "separate"
    """`shared`: both anchor stages spend one set of `limits` (see anchor.workflow); `separate`: each gets them."""
    anchor_stage1_tests: Literal["allowed", "forbidden"] = "allowed"
    """`forbidden` (RepoMirage's rule): each stage-1 test run is recorded as a violation (anchor.stage1_tests)."""
    templates: TemplatesName = "repoanchor"
    """mini-swe-agent's templates (scaffolds/mini/templates.py): `repoanchor`, ours (mini_system.j2, task.j2);
    `mini-swebench`, its installed SWE-bench ones (swebench.yaml's system, instance, observation and format-error
    templates) with the issue as `task`, hints after it. Anchor runs: our stage prompts are the user messages, under
    mini's other templates. OpenCode has no such templates: refused."""
    hints: str = "none"
    hints_file: str | None = None
    instruction_cache: Path | None = None


@functools.cache
def warn_once(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def scaffold_for(name: str, templates: str = "repoanchor", anchor: bool = False):
    """The scaffold, set to render `templates` (mini-swe-agent only; anchor runs keep our stage prompts)."""
    name = ALIASES.get(name, name)
    if name not in SCAFFOLDS:
        raise ValueError(f"unknown scaffold {name!r}; choose one of {sorted(SCAFFOLDS) + sorted(ALIASES)}")
    if templates == "repoanchor":
        return SCAFFOLDS[name]()
    if name != "mini-swe-agent":
        raise ValueError(
            f"templates {templates!r} are mini-swe-agent's own; {name} has none (use templates: repoanchor)"
        )
    return SCAFFOLDS[name](template_set(templates, stage_prompts=anchor))


def plain_prompt(options: RunOptions, task: Task, hint_text: str, workdir: str) -> str:
    """A plain run's prompt: our task.j2, or, under mini's SWE-bench templates, their `task` variable (the issue as
    mini's swebench runner gives it; hints, having no place in mini's template, follow it in task.j2's block)."""
    if options.templates == "repoanchor":
        return prompts.render("task", task=task.problem_statement, hints=hint_text, workdir=workdir)
    if not hint_text:
        return task.problem_statement
    return f"{task.problem_statement.rstrip()}\n\n<hints>\n{hint_text}\n</hints>\n"


TRUSTED_POLICIES = ("openai/oracle",)
"""Scripted policies whose commands are known (the demo's oracle, `evals.demo.oracle.ORACLE_MODEL`): they may
run on the host. Anything else is a model, whose commands run in a container unless `local` is asked for."""
LOCAL_WARNING = (
    "running a model's commands on the host (--env local): they see the host's files and network; "
    "use --env image (the task's environment image) or docker for models"
)


def resolve_environment(config: EnvironmentConfig, task: Task, model: str) -> tuple[EnvironmentConfig, str | None]:
    """(the environment to open, a note when it is a choice the user should know of).

    `auto`: a trusted policy runs locally; a model in the task's environment image, or, for a task directory
    (no dataset repo, so no image), in a container of the base image. `image`: a container of the task's
    environment image, the repository at /testbed, the spec's setup steps and install run before the agent."""
    kind = config.kind
    if kind == "auto":
        kind = "local" if model in TRUSTED_POLICIES else ("image" if task.source_repo else "docker")
    if kind == "local":
        note = None if model in TRUSTED_POLICIES else LOCAL_WARNING
        return config.model_copy(update={"kind": "local"}), note
    if kind == "docker":
        note = None if config.kind == "docker" else f"{task.instance_id}: a task directory has no environment image"
        return config.model_copy(update={"kind": "docker"}), note
    if not task.source_repo:
        raise TaskError(f"{task.instance_id}: no `repo` field, so no environment image; use --env docker or local")
    row = {"instance_id": task.instance_id, "repo": task.source_repo, "version": task.version}
    spec = env_image_spec(row, None if config.image == BASE_IMAGE else config.image)
    setup = "\n".join([*spec.pre_install, spec.install or "true"])
    resolved = {"kind": "docker", "image": spec.image, "workdir": IMAGE_REPO_DIR, "setup": setup}
    return config.model_copy(update=resolved), None


def check_options(options: RunOptions) -> None:
    """What a run would refuse, before it starts: an unknown scaffold or hint variant, a missing hints file, a
    cost limit on a model without a price, a provider key that is not set (ValueError or FileNotFoundError,
    naming the option)."""
    refuse_missing_credentials([options.model], ["--model"])
    scaffold_for(options.scaffold, options.templates, options.anchor)
    prompts.hints(options.hints, options.hints_file)
    refuse_unpriced([options.model], options.limits.cost)


def run_task(task: Task, options: RunOptions, out: Path, hints_text: str | None = None) -> dict:
    """Run `task` as `options` say; returns the summary also written to `out/summary.json`.

    `hints_text`: the hints file's content where `options.hints_file` cannot be read (a Ray node); the file's
    path then only labels the condition, as it does everywhere else."""
    scaffold = scaffold_for(options.scaffold, options.templates, options.anchor)
    hint_text = prompts.hints(options.hints, options.hints_file, text=hints_text)
    out.mkdir(parents=True, exist_ok=True)
    environment, note, status = options.environment, None, {}
    try:
        environment, note = resolve_environment(options.environment, task, options.model.model)
        if note:
            warn_once(note)
        # OpenCode runs inside the container: its binary and the model relay's socket are mounted there.
        mounts = scaffold.mounts() if environment.kind == "docker" and hasattr(scaffold, "mounts") else None
        with open_environment(environment, task.repo, task.base_commit, mounts=mounts) as env:
            if options.templates == "mini-swebench" and env.workdir != IMAGE_REPO_DIR:
                warn_once(
                    f"mini's SWE-bench templates name {IMAGE_REPO_DIR} as the working folder; here it is elsewhere"
                )
            if options.anchor:
                cache = InstructionCache(options.instruction_cache) if options.instruction_cache else None
                record = run_anchored(scaffold, task.problem_statement, env, options.model, options.limits, out,
                                      hints=hint_text, cache=cache, budget=options.anchor_budget,
                                      stage1_tests=options.anchor_stage1_tests)  # fmt: skip
                status = {"anchor_status": record.anchor_status, "anchor_budget": record.budget,
                          "stage_limits": record.stage_limits}  # fmt: skip
            else:
                prompt = plain_prompt(options, task, hint_text, env.workdir)
                record = scaffold.run(prompt, env, options.model, options.limits, out)
    except InfraError as error:  # no environment (no engine, no image, a failed setup): the agent never ran
        record = RunRecord(scaffold=scaffold.name, model=options.model.model, environment=environment.kind,
                           infra_error=error.kind, infra_message=redact(error.message)[:2000])  # fmt: skip
    (out / "patch.diff").write_text(record.patch, encoding="utf-8")
    summary = {
        "instance_id": task.instance_id,
        "scaffold": scaffold.name,
        "model": options.model.model,
        "environment": environment.kind if environment.setup is None else "image",
        "image": environment.image if environment.kind == "docker" else None,
        "environment_note": note,
        "condition": ("anchor" if options.anchor else "plain") + f"+hints:{options.hints_file or options.hints}",
        "templates": options.templates,
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
