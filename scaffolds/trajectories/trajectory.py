"""The normalised, versioned trajectory format every scaffold's run is converted to.

One JSON document per run. `format` names the schema version; `load` refuses any other version instead of
guessing, so a schema change is always an explicit migration. Readers for the scaffolds' own files live in
`readers.py`; the step parser (categories, phases, files touched) works on `Trajectory.actions`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

TRAJECTORY_FORMAT = "repoanchor.trajectory/1"

# Tool output can be megabytes (a `cat` of a generated file); the normalised file keeps the head and tail,
# which is what the step parser and a human reader need, so a batch of trajectories stays small.
OUTPUT_EXCERPT_CHARS = 4000

SourceFormat = Literal[
    "mini-swe-agent-v1", "mini-swe-agent-v2", "opencode-events", "opencode-export",
    "swe-agent", "openhands",  # runs of other harnesses, read by `repoanchor import` (evals/interop/imports)
]  # fmt: skip


class TrajectoryError(Exception):
    """A trajectory file that cannot be read: truncated, not JSON, an unknown format or a wrong version.

    The message always starts with the file's path, so a batch report says which file is bad.
    """

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def excerpt(text: str | None, limit: int = OUTPUT_EXCERPT_CHARS) -> tuple[str, bool]:
    """Return (`text` bounded to about `limit` chars keeping head and tail, whether anything was cut)."""
    if text is None:
        return "", False
    if len(text) <= limit:
        return text, False
    half = limit // 2
    elided = len(text) - 2 * half
    return f"{text[:half]}\n[... {elided} characters elided ...]\n{text[-half:]}", True


class Action(BaseModel):
    """One tool call the scaffold actually executed (format errors that were never run are not actions)."""

    # Attribute docstrings become field descriptions, so the JSON schema documents itself.
    model_config = ConfigDict(use_attribute_docstrings=True)

    index: int
    """Position of this action in the trajectory, from 0, across all turns."""
    tool: str
    """Tool name: always `bash` for mini-swe-agent; OpenCode's tool name (`read`, `edit`, `grep`, ...)."""
    command: str | None = None
    """The shell command, for bash actions; None for other tools."""
    tool_input: dict[str, Any] = Field(default_factory=dict)
    """The tool's arguments as the scaffold recorded them (for bash: `{"command": ...}` and any extras)."""
    output_excerpt: str = ""
    """What the tool returned (or its error message), bounded by `OUTPUT_EXCERPT_CHARS`."""
    output_truncated: bool = False
    """True when `output_excerpt` was shortened here (the scaffold may have elided output itself too)."""
    exit_code: int | None = None
    """The command's exit status when the scaffold recorded one; None when unknown (e.g. the submit call)."""
    tool_error: bool = False
    """True when the tool itself failed (OpenCode `status: error`), as opposed to a command exiting non-zero."""
    turn_index: int
    """Index of the model turn (`Trajectory.turns`) whose response issued this action."""


class ModelTurn(BaseModel):
    """One model response (one API call that was kept in the trajectory)."""

    # Attribute docstrings become field descriptions, so the JSON schema documents itself.
    model_config = ConfigDict(use_attribute_docstrings=True)

    index: int
    """Position of the turn, from 0."""
    cost: float | None = None
    """Cost in USD of this call when recorded."""
    input_tokens: int | None = None
    """Prompt tokens of this call when recorded."""
    output_tokens: int | None = None
    """Completion tokens of this call (reasoning included) when recorded."""
    format_error: bool = False
    """True when the response was rejected as malformed (zero or several actions in text mode) and nothing ran."""
    n_actions: int = 0
    """How many actions this turn issued."""


class Trajectory(BaseModel):
    """A scaffold run in the normalised form, independent of which scaffold produced it."""

    # Attribute docstrings become field descriptions, so the JSON schema documents itself.
    model_config = ConfigDict(use_attribute_docstrings=True)

    format: Literal["repoanchor.trajectory/1"] = TRAJECTORY_FORMAT
    """Schema version of this document; `load` rejects any other value."""
    source_format: SourceFormat
    """Which scaffold file format this was read from."""
    source_path: str | None = None
    """The file it was read from, when read from a file."""
    instance_id: str | None = None
    """Task instance id (SWE-bench style) when the source records one."""
    session_id: str | None = None
    """OpenCode session id, when the source is OpenCode."""
    model: str | None = None
    """Model name as the scaffold recorded it."""
    exit_status: str | None = None
    """How the run ended: mini-swe-agent's own status (`Submitted`, `LimitsExceeded`, an exception name, ...);
    for OpenCode `Finished` (model stopped calling tools), the error's name, or `Incomplete` (stream cut off)."""
    submission: str | None = None
    """The submitted output or patch, when the scaffold recorded one (mini-swe-agent)."""
    cost: float | None = None
    """Total cost in USD: the scaffold's total when recorded, else the sum over turns."""
    input_tokens: int | None = None
    """Total prompt tokens, summed over turns, when any turn recorded them."""
    output_tokens: int | None = None
    """Total completion tokens, summed over turns, when any turn recorded them."""
    api_calls: int | None = None
    """Model calls made, as the scaffold counted them (includes calls that produced format errors)."""
    format_errors: int = 0
    """Model responses rejected as malformed and never executed."""
    turns: list[ModelTurn] = Field(default_factory=list)
    """Every model response kept in the source, in order."""
    actions: list[Action] = Field(default_factory=list)
    """Every executed tool call, in order; the step parser classifies these."""
    notes: list[str] = Field(default_factory=list)
    """What the reader left out of the source, and why (a line of an OpenCode stream that is not a JSON event,
    such as a warning the CLI printed to stdout; a last line cut off mid-write). Empty when nothing was."""


def total_or_none(values: list[int | None]) -> int | None:
    """Sum the known values; None when none is known (so 'unknown' is never reported as 0)."""
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def save(trajectory: Trajectory, path: str | Path) -> Path:
    """Write `trajectory` as indented JSON, atomically (a crash never leaves half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(trajectory.model_dump_json(indent=1), encoding="utf-8")
    temporary.replace(path)
    return path


def load(path: str | Path) -> Trajectory:
    """Read a file written by `save`; raises `TrajectoryError` on bad JSON or another schema version."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise TrajectoryError(path, f"cannot read a normalised trajectory: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != TRAJECTORY_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise TrajectoryError(path, f"expected format {TRAJECTORY_FORMAT!r}, found {found!r}")
    try:
        return Trajectory.model_validate(data)
    except ValidationError as exc:
        raise TrajectoryError(path, f"invalid {TRAJECTORY_FORMAT} document: {exc}") from exc
