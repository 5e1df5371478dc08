"""The records every scaffold run produces, shared by environments, adapters and the run matrix.

A run ends in exactly one of three ways: the agent finished (`exit_status` says how: Submitted,
Finished, LimitsExceeded, ...), or the infrastructure failed (`infra_error` set: the model server,
the engine, a missing binary). Infrastructure failures are never counted as agent failures.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class InfraError(RuntimeError):
    """Something outside the agent failed; `kind` classifies it for retries and reports."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


@dataclass
class CommandResult:
    output: str
    """stdout and stderr merged, in the order the command wrote them."""
    returncode: int
    timed_out: bool = False


class Limits(BaseModel):
    """Stops a run early; 0 means no limit. The reason is recorded as `exit_status` LimitsExceeded."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    steps: int = 100
    """Model calls."""
    cost: float = 3.0
    """USD, as the scaffold computes it from the model's price."""
    wall_seconds: float = 1800.0
    """Wall-clock time of the whole run."""
    command_timeout: float = 120.0
    """Seconds one shell command may run before it is killed (the agent sees the timeout)."""


class RunRecord(BaseModel):
    """What one scaffold run wrote; serialised next to the trajectory as `run.json`."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    scaffold: str
    model: str
    environment: str
    prompt: str = ""
    """The first user message exactly as sent (task, hints, anchor stage text)."""
    system_prompt: str | None = None
    """The system prompt we set, when the scaffold takes one from us (mini-swe-agent); OpenCode uses its own."""
    templates: dict | None = None
    """mini-swe-agent: the template set it rendered (`name` repoanchor or mini-swebench, and for mini's own, the
    file, mini's version and the file's sha256); None for scaffolds with their own prompts (OpenCode)."""
    exit_status: str | None = None
    """How the agent's run ended; None when an infrastructure error prevented an ending."""
    exit_message: str | None = None
    """Why the run stopped, in words, when the adapter stopped it (which limit was hit)."""
    infra_error: str | None = None
    """The InfraError kind (model_server_error, model_unreachable, engine_unavailable, missing_binary, ...)."""
    infra_message: str | None = None
    patch: str = ""
    """`git diff` of the working tree against the task's base commit, untracked files included."""
    steps: int = 0
    cost: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    wall_seconds: float = 0.0
    trajectory: str | None = None
    """Path of the normalised trajectory (repoanchor.trajectory/1), relative to the run folder."""
    raw: list[str] = []
    """Paths of the scaffold's own files (mini-swe-agent traj.json, OpenCode events and export)."""
    relay_refusals: list[dict] = []
    """Requests the model relay refused (method, path, status, reason): another endpoint, model or key, or a
    body over the cap: what the agent's commands tried through the scaffold's own connection."""

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / "run.json.tmp"
        temporary.write_text(self.model_dump_json(indent=1), encoding="utf-8")
        return temporary.replace(folder / "run.json")
