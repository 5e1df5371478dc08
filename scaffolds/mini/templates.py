"""Which templates mini-swe-agent renders: ours (`repoanchor`) or its own SWE-bench ones (`mini-swebench`).

A template set is what mini's DefaultAgent and LitellmModel take as configuration: the system and instance
templates, and (for mini's set) the observation and format-error templates. mini renders them itself with
its template variables (the agent's, the environment's, the model's and `task`), as its swebench runner does.

`repoanchor`: the system prompt is prompts/mini_system.j2 and the user message is the caller's prompt, both
passed through as the variables `system` and `task`; observations use mini's defaults.
`mini-swebench`: the templates of `minisweagent/config/benchmarks/swebench.yaml`, read from the installed
package at run time (never copied here), so a run uses exactly what that mini-swe-agent version ships. The
instance template wraps the caller's prompt (the issue text) as `{{task}}`. For RepoAnchor's stages the
prompts are ours (`stage_prompts=True`): mini's system, observation and format-error templates apply, but
the stage text is the user message as given, since mini's instance template would call it a PR to patch.
"""

from __future__ import annotations

import hashlib
import importlib.util
from importlib.metadata import version
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel

TemplatesName = Literal["repoanchor", "mini-swebench"]
TEMPLATE_SETS: tuple[str, ...] = ("repoanchor", "mini-swebench")
SWEBENCH_CONFIG = ("config", "benchmarks", "swebench.yaml")
"""mini-swe-agent's SWE-bench config, relative to the installed `minisweagent` package."""
PASS_THROUGH = "{{ task }}"


class TemplateSet(BaseModel):
    name: TemplatesName
    system: str = "{{ system }}"
    instance: str = PASS_THROUGH
    observation: str | None = None
    """None: mini's LitellmModel default."""
    format_error: str | None = None
    source: dict | None = None
    """Where the templates came from: mini's file, its version and the file's sha256."""
    stage_prompts: bool = False
    """RepoAnchor stages: the user message is our stage prompt, not mini's instance template."""

    def agent_config(self) -> dict:
        return {"system_template": self.system, "instance_template": self.instance}

    def mini_model_fields(self) -> dict:
        fields = {"observation_template": self.observation, "format_error_template": self.format_error}
        return {name: value for name, value in fields.items() if value is not None}

    def describe(self) -> dict:
        """What run.json records of the set."""
        described: dict = {"name": self.name}
        if self.source:
            described |= self.source
        if self.stage_prompts:
            described["user_message"] = "RepoAnchor stage prompt (ours)"
        return described


def swebench_config_path() -> Path:
    """The installed mini-swe-agent's swebench.yaml, found without importing mini (its import reads a .env)."""
    spec = importlib.util.find_spec("minisweagent")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("templates mini-swebench need mini-swe-agent installed; it is not")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*SWEBENCH_CONFIG)


def swebench_templates(stage_prompts: bool = False) -> TemplateSet:
    path = swebench_config_path()
    data = path.read_bytes()
    config = yaml.safe_load(data)
    agent, model = config["agent"], config.get("model", {})
    source = {
        "file": "minisweagent/" + "/".join(SWEBENCH_CONFIG),
        "mini_swe_agent": version("mini-swe-agent"),
        "sha256": hashlib.sha256(data).hexdigest()[:16],
    }
    return TemplateSet(
        name="mini-swebench",
        system=agent["system_template"],
        instance=PASS_THROUGH if stage_prompts else agent["instance_template"],
        observation=model.get("observation_template"),
        format_error=model.get("format_error_template"),
        source=source,
        stage_prompts=stage_prompts,
    )


def template_set(name: str, stage_prompts: bool = False) -> TemplateSet:
    """The named set; `stage_prompts` for RepoAnchor's stage runs."""
    if name == "repoanchor":  # the user message is always the caller's prompt
        return TemplateSet(name="repoanchor")
    if name == "mini-swebench":
        return swebench_templates(stage_prompts)
    raise ValueError(f"unknown templates {name!r}; choose one of {TEMPLATE_SETS}")
