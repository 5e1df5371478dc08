"""Readers for OpenCode's files: `opencode run --format json` event streams and `opencode export` documents.

Shapes are those recorded in `reference/scaffolds-offline.md` (OpenCode 1.18.33, sections B.3 and B.4). One
model turn is one assistant message (`messageID`, bracketed by step_start/step_finish); it can hold several
tool calls. Tool parts only appear once the tool finished, so every tool part is an executed action.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repoanchor.scaffolds.trajectories.trajectory import (
    Action,
    ModelTurn,
    Trajectory,
    TrajectoryError,
    excerpt,
    total_or_none,
)

# OpenCode has no submit action: a run ends when the model answers without tool calls (reason "stop").
FINISHED = "Finished"
# No final "stop" and no error event: the stream was cut off (process killed, limit hit, crash).
INCOMPLETE = "Incomplete"


def tool_action(part: dict[str, Any], index: int, turn_index: int) -> Action:
    """Turn one OpenCode tool part (`{"tool", "callID", "state": {...}}`) into an Action."""
    state = part.get("state") or {}
    tool = str(part.get("tool") or "unknown")
    tool_input = state.get("input") if isinstance(state.get("input"), dict) else {}
    # A failed tool (file not found, permission rejected) has `error` instead of `output`.
    raw_output = state.get("output") if "output" in state else state.get("error")
    output, truncated = excerpt(None if raw_output is None else str(raw_output))
    exit_code = (state.get("metadata") or {}).get("exit")
    command = tool_input.get("command") if tool == "bash" else None
    return Action(
        index=index,
        tool=tool,
        command=command if isinstance(command, str) else None,
        tool_input=tool_input,
        output_excerpt=output,
        output_truncated=truncated,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        tool_error=state.get("status") == "error",
        turn_index=turn_index,
    )


def _apply_usage(turn: ModelTurn, cost: Any, tokens: Any) -> None:
    """Copy a step's cost and tokens onto `turn`; reasoning tokens are counted as output, as litellm does."""
    if isinstance(cost, (int, float)):
        turn.cost = float(cost)
    if isinstance(tokens, dict):
        if isinstance(tokens.get("input"), int):
            turn.input_tokens = tokens["input"]
        if isinstance(tokens.get("output"), int):
            turn.output_tokens = tokens["output"] + int(tokens.get("reasoning") or 0)


def _totals(trajectory: Trajectory, recorded_cost: Any = None) -> Trajectory:
    """Fill totals from the turns, preferring a total the scaffold recorded itself."""
    turns = trajectory.turns
    for turn in turns:
        turn.n_actions = sum(1 for action in trajectory.actions if action.turn_index == turn.index)
    costs = [turn.cost for turn in turns if turn.cost is not None]
    if isinstance(recorded_cost, (int, float)):
        trajectory.cost = float(recorded_cost)
    elif costs:
        trajectory.cost = sum(costs)
    trajectory.input_tokens = total_or_none([turn.input_tokens for turn in turns])
    trajectory.output_tokens = total_or_none([turn.output_tokens for turn in turns])
    trajectory.api_calls = len(turns)
    return trajectory


def read_opencode_events(path: str | Path, events: list[Any]) -> Trajectory:
    """Fold a `--format json` event list (one dict per stdout line) into a Trajectory."""
    trajectory = Trajectory(source_format="opencode-events", source_path=str(path))
    current: ModelTurn | None = None
    last_reason: str | None = None
    error_name: str | None = None
    for line_number, event in enumerate(events, start=1):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise TrajectoryError(path, f"line {line_number}: not an OpenCode event (no 'type')")
        kind = event["type"]
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        trajectory.session_id = trajectory.session_id or event.get("sessionID")
        if kind == "step_start" or (kind == "tool_use" and current is None):
            current = ModelTurn(index=len(trajectory.turns))
            trajectory.turns.append(current)
        if kind == "tool_use":
            trajectory.actions.append(tool_action(part, len(trajectory.actions), current.index))
        elif kind == "step_finish" and current is not None:
            _apply_usage(current, part.get("cost"), part.get("tokens"))
            last_reason = part.get("reason")
            current = None
        elif kind == "error":
            error = event.get("error") or {}
            error_name = str(error.get("name") or "UnknownError") if isinstance(error, dict) else "UnknownError"
    if error_name:
        trajectory.exit_status = error_name
    else:
        trajectory.exit_status = FINISHED if last_reason == "stop" else INCOMPLETE
    return _totals(trajectory)


def read_opencode_export(path: str | Path, data: dict[str, Any]) -> Trajectory:
    """Read an `opencode export <sessionID>` document (`{"info": {...}, "messages": [{"info", "parts"}]}`)."""
    info = data.get("info")
    messages = data.get("messages")
    if not isinstance(info, dict) or not isinstance(messages, list):
        raise TrajectoryError(path, "OpenCode export needs an 'info' object and a 'messages' list")
    model = info.get("model") if isinstance(info.get("model"), dict) else {}
    model_name = "/".join(str(model[key]) for key in ("providerID", "id") if model.get(key)) or None
    trajectory = Trajectory(
        source_format="opencode-export", source_path=str(path), session_id=info.get("id"), model=model_name
    )
    last_finish: str | None = None
    error_name: str | None = None
    for position, message in enumerate(messages):
        message_info = message.get("info") if isinstance(message, dict) else None
        parts = message.get("parts") if isinstance(message, dict) else None
        if not isinstance(message_info, dict) or not isinstance(parts, list):
            raise TrajectoryError(path, f"messages[{position}] needs an 'info' object and a 'parts' list")
        if message_info.get("role") != "assistant":
            continue
        turn = ModelTurn(index=len(trajectory.turns))
        trajectory.turns.append(turn)
        _apply_usage(turn, message_info.get("cost"), message_info.get("tokens"))
        trajectory.model = trajectory.model or message_info.get("modelID")
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "tool":
                trajectory.actions.append(tool_action(part, len(trajectory.actions), turn.index))
        last_finish = message_info.get("finish")
        error = message_info.get("error")
        if isinstance(error, dict):
            error_name = str(error.get("name") or "UnknownError")
    if error_name:
        trajectory.exit_status = error_name
    else:
        trajectory.exit_status = FINISHED if last_finish == "stop" else INCOMPLETE
    return _totals(trajectory, recorded_cost=info.get("cost"))
