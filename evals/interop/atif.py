"""Normalised trajectories written in Harbor's ATIF (Agent Trajectory Interchange Format), for its viewers.

Fields as Harbor's RFC 0001 and its pydantic models define them (`schema_version`, `session_id`, `agent`
{name, version, model_name}, `steps` [{step_id from 1, source, message, tool_calls [{tool_call_id,
function_name, arguments}], observation {results [{source_call_id, content}]}, metrics {prompt_tokens,
completion_tokens, cost_usd}, extra}], `notes`, `final_metrics`, `extra`). We write ATIF-v1.6, the newest
version every reader we know of accepts, and use no field a later version added.

One agent step per model turn, its tool calls being the turn's actions and its observation their outputs,
after a system and a user step holding the prompts our adapters sent, where `run.json` beside the trajectory
records them. The normalised trajectory keeps no model message text (only actions, bounded outputs and
usage), so an agent step's `message` is empty and `notes` says so; each call's step label (category and
phase, STEPS.md) and exit code ride in the step's `extra`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from repoanchor.evals.analysis.steps_frame import collect, read_any
from repoanchor.perturb.atomic import write_atomic
from repoanchor.scaffolds.steps.classify import Label
from repoanchor.scaffolds.steps.sequence import labels_in_order
from repoanchor.scaffolds.trajectories.trajectory import Action, ModelTurn, Trajectory, TrajectoryError

SCHEMA_VERSION = "ATIF-v1.6"
RUN_RECORD = "run.json"
"""What our adapters write beside a trajectory (scaffolds.records.RunRecord): it holds the prompts sent."""
AGENTS = {
    "mini-swe-agent-v1": "mini-swe-agent", "mini-swe-agent-v2": "mini-swe-agent", "opencode-events": "opencode",
    "opencode-export": "opencode", "swe-agent": "swe-agent", "openhands": "openhands",
}  # fmt: skip
NOTES = (
    "Exported by RepoAnchor from its normalised trajectory ({source}). It keeps each model turn's actions, "
    "their outputs (long ones cut to head and tail) and usage, not the text of the messages: agent steps "
    "have an empty message."
)


def to_atif(trajectory: Trajectory, session_id: str, prompts: dict[str, str] | None = None) -> dict:
    """The ATIF document of one normalised trajectory (None fields left out, as Harbor writes them).

    `prompts` ({"system": ..., "user": ...}, either optional) open the steps when the run recorded them."""
    opening = [{"source": source, "message": text} for source, text in (prompts or {}).items() if text]
    by_turn: dict[int, list[tuple[Action, Label]]] = {}
    for action, label in zip(
        trajectory.actions, labels_in_order(trajectory.actions, trajectory.instance_id), strict=True
    ):
        by_turn.setdefault(action.turn_index, []).append((action, label))
    steps = opening + [_step(turn, by_turn.get(turn.index, [])) for turn in trajectory.turns]
    if not steps:  # ATIF needs one step at least; a run that never reached the model still gets its record
        steps = [{"source": "system", "message": "The run made no model call."}]
    steps = [{"step_id": number, **step} for number, step in enumerate(steps, start=1)]
    agent = {"name": AGENTS[trajectory.source_format], "version": "unknown", "model_name": trajectory.model}
    document = {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_id,
        "agent": agent,
        "steps": steps,
        "notes": NOTES.format(source=trajectory.source_format),
        "final_metrics": {
            "total_prompt_tokens": trajectory.input_tokens,
            "total_completion_tokens": trajectory.output_tokens,
            "total_cost_usd": trajectory.cost,
            "total_steps": len(steps),
        },
        "extra": {
            "instance_id": trajectory.instance_id, "exit_status": trajectory.exit_status,
            "source_format": trajectory.source_format, "source_path": trajectory.source_path,
            "api_calls": trajectory.api_calls, "format_errors": trajectory.format_errors,
        },
    }  # fmt: skip
    return _without_none(document)


def _step(turn: ModelTurn, labelled: list[tuple[Action, Label]]) -> dict:
    step: dict = {"source": "agent", "message": ""}
    actions = [action for action, _ in labelled]
    if actions:
        calls = [(f"call_{action.index}", action) for action in actions]
        step["tool_calls"] = [
            {"tool_call_id": call_id, "function_name": action.tool, "arguments": action.tool_input}
            for call_id, action in calls
        ]
        step["observation"] = {
            "results": [{"source_call_id": call_id, "content": action.output_excerpt} for call_id, action in calls]
        }
    metrics = {"prompt_tokens": turn.input_tokens, "completion_tokens": turn.output_tokens, "cost_usd": turn.cost}
    if any(value is not None for value in metrics.values()):
        step["metrics"] = metrics
    labels = [_label(f"call_{action.index}", action, label) for action, label in labelled]
    extra = {"format_error": True} if turn.format_error else {}
    step["extra"] = {**extra, "repoanchor_steps": labels} if labels else extra or None
    return step


def _label(call_id: str, action: Action, label: Label) -> dict:
    return {"tool_call_id": call_id, "category": label.category, "phase": label.phase,
            "exit_code": action.exit_code, "tool_error": action.tool_error}  # fmt: skip


def _without_none(value):
    if isinstance(value, dict):
        return {key: _without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value]
    return value


def export_atif(paths: list[Path], out: Path) -> dict:
    """One `<name>.atif.json` per trajectory found under `paths` (files, run folders, matrices); a summary.

    A file that cannot be read is named in `errors` and the others are still written."""
    found, errors = collect(paths)
    written: dict[str, str] = {}
    for path in found:
        try:
            trajectory = read_any(path)
        except TrajectoryError as error:
            errors.append(error)
            continue
        name = _name(path, paths, written)
        document = to_atif(trajectory, session_id=trajectory.session_id or name, prompts=run_prompts(path))
        write_atomic(Path(out) / f"{name}.atif.json", json.dumps(document, indent=1))
        written[name] = str(path)
    return {"out": str(out), "written": len(written), "errors": [str(error) for error in errors]}


def run_prompts(path: Path) -> dict[str, str]:
    """The system prompt and first user message our adapters record beside a trajectory (`run.json`)."""
    try:
        record = json.loads((path.parent / RUN_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    record = record if isinstance(record, dict) else {}
    found = {"system": record.get("system_prompt"), "user": record.get("prompt")}
    return {source: text for source, text in found.items() if isinstance(text, str) and text}


def _name(path: Path, roots: list[Path], taken: dict[str, str]) -> str:
    """The file's path below the root it was found under, as one file name (a unit's folders say which run)."""
    root = next((Path(r) for r in roots if Path(r).is_dir() and path.is_relative_to(r)), path.parent)
    relative = path.relative_to(root) if path != root else Path(path.name)
    stem = str(relative).removesuffix(".json").removesuffix(".traj").removesuffix(".jsonl")
    name = re.sub(r"[^\w.-]+", "__", stem).strip("_.") or "trajectory"
    return name if name not in taken else f"{name}-{len(taken)}"
