"""mini-swe-agent's `*.traj.json`: 1.x text actions, 2.x tool calls, and 2.x through the OpenAI Responses API.

The Responses API models (`litellm_response`, `openrouter_response`, `portkey_response`) store each model answer
as the response object itself (`"object": "response"`, its `output` items holding the `function_call`s) and each
observation as a `function_call_output` item, neither with a `role`: `_as_chat_messages` rewrites those two shapes
into the chat shape (an assistant message with `tool_calls`, a `tool` message) so one reader serves every mode.
"""

from __future__ import annotations

import json
import re
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

# mini-swe-agent 1.x used ```bash; 2.x text mode uses ```mswea_bash_command. Same rule: exactly one block.
ACTION_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
# mini 0.x's observations put the code on its own line and split the output into <stdout> and <stderr>, after an
# <args> echo of the container command that ran (`['docker', 'exec', ..., 'bash', '-c', 'ls']`): not output.
OUTPUT_TAGS = re.compile(r"\n*</?(?:output|stdout|stderr)>\n*")
ARGS_ECHO = re.compile(r"<args>.*?</args>\n?", re.DOTALL)


def is_mini_message_list(document: Any) -> bool:
    """A bare JSON list of chat messages (mini's `agent.messages` saved without `info`)."""
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(item, dict) and ("role" in item or _responses_item(item)) for item in document)
        and document[0].get("role") == "system"
    )


def _responses_item(item: dict[str, Any]) -> bool:
    return item.get("object") == "response" or item.get("type") == "function_call_output"


def _as_chat_messages(messages: list[Any]) -> list[Any]:
    """Responses API items rewritten into the chat shape; everything else unchanged."""
    return [_chat_message(item) if isinstance(item, dict) and _responses_item(item) else item for item in messages]


def _chat_message(item: dict[str, Any]) -> dict[str, Any]:
    extra = item.get("extra") if isinstance(item.get("extra"), dict) else {}
    if item.get("type") == "function_call_output":
        return {"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output"), "extra": extra}
    output = [part for part in item.get("output") or [] if isinstance(part, dict)]
    texts = [_text(part.get("content")) for part in output if part.get("type") == "message"]
    calls = [
        {
            "id": part.get("call_id") or part.get("id"),
            "function": {"name": part.get("name"), "arguments": part.get("arguments")},
        }
        for part in output
        if part.get("type") == "function_call"
    ]
    usage = item.get("usage") if isinstance(item.get("usage"), dict) else {}
    # The chat shape keeps token counts in extra.response.usage as prompt/completion tokens; the Responses API
    # names them input/output tokens at the top of the response.
    tokens = {"prompt_tokens": usage.get("input_tokens"), "completion_tokens": usage.get("output_tokens")}
    extra = {**extra, "response": {"usage": tokens}}
    return {"role": "assistant", "content": "\n".join(texts), "extra": extra, "tool_calls": calls}


def _text(content: Any) -> str:
    """Message content as text; multimodal content is a list of `{"type": "text", "text": ...}` parts."""
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _observation(message: dict[str, Any] | None) -> tuple[str | None, int | None]:
    """(output, exit code) from an observation message; the unrendered `raw_output` is preferred."""
    if message is None:
        return None, None
    extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
    content = _text(message.get("content"))
    returncode = extra.get("returncode")
    if not isinstance(returncode, int):
        match = RETURNCODE.search(content)
        returncode = int(match.group(1)) if match else None
    if isinstance(extra.get("raw_output"), str):
        return extra["raw_output"], returncode
    return OUTPUT_TAGS.sub("\n", RETURNCODE.sub("", ARGS_ECHO.sub("", content))).strip("\n"), returncode


def _turn_usage(index: int, message: dict[str, Any]) -> ModelTurn:
    """A turn with the cost (2.x: `extra.cost`; 1.x via OpenRouter: `usage.cost`) and tokens of its response."""
    extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
    response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    cost = extra.get("cost", usage.get("cost"))
    return ModelTurn(
        index=index,
        cost=float(cost) if isinstance(cost, (int, float)) else None,
        input_tokens=usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else None,
        output_tokens=usage.get("completion_tokens") if isinstance(usage.get("completion_tokens"), int) else None,
    )


def _add_action(trajectory: Trajectory, turn: ModelTurn, command: Any, tool: str, observation: Any) -> None:
    output, exit_code = _observation(observation)
    bounded, truncated = excerpt(output)
    tool_input = command if isinstance(command, dict) else {"command": command}
    trajectory.actions.append(
        Action(
            index=len(trajectory.actions),
            tool=tool,
            command=tool_input.get("command") if isinstance(tool_input.get("command"), str) else None,
            tool_input=tool_input,
            output_excerpt=bounded,
            output_truncated=truncated,
            exit_code=exit_code,
            turn_index=turn.index,
        )
    )
    turn.n_actions += 1


def read_mini_swe_agent(path: str | Path, data: dict[str, Any]) -> Trajectory:
    """Read a mini-swe-agent `*.traj.json` (1.x text actions or 2.x tool calls, told apart by content)."""
    responses_api = any(isinstance(item, dict) and _responses_item(item) for item in data["messages"])
    messages = _as_chat_messages(data["messages"])
    if not all(isinstance(message, dict) and "role" in message for message in messages):
        raise TrajectoryError(path, "mini-swe-agent trajectory: every message needs a 'role'")
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    tool_mode = responses_api or any(message["role"] == "tool" or message.get("tool_calls") for message in messages)
    trajectory = Trajectory(
        source_format="mini-swe-agent-v2" if tool_mode else "mini-swe-agent-v1",
        source_path=str(path),
        instance_id=data.get("instance_id"),
    )
    tool_replies = {m.get("tool_call_id"): m for m in messages if m["role"] == "tool" and m.get("tool_call_id")}
    for position, message in enumerate(messages):
        extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
        if message["role"] == "user" and extra.get("interrupt_type") == "FormatError":
            # 2.x stores a malformed response only inside the error message it triggered.
            trajectory.turns.append(ModelTurn(index=len(trajectory.turns), format_error=True))
            trajectory.format_errors += 1
            continue
        if message["role"] != "assistant":
            continue
        turn = _turn_usage(len(trajectory.turns), message)
        trajectory.turns.append(turn)
        if tool_mode:
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except (json.JSONDecodeError, RecursionError, TypeError):  # kept as given: the call is still a step
                    arguments = {"raw_arguments": function.get("arguments")}
                reply = tool_replies.get(call.get("id"))
                _add_action(trajectory, turn, arguments, str(function.get("name") or "bash"), reply)
            continue
        blocks = ACTION_BLOCK.findall(_text(message.get("content")))
        if len(blocks) != 1:
            # mini-swe-agent rejects zero or several blocks with a FormatError; nothing was executed.
            turn.format_error = True
            trajectory.format_errors += 1
            continue
        following = messages[position + 1] if position + 1 < len(messages) else None
        observation = following if following is not None and following["role"] == "user" else None
        _add_action(trajectory, turn, blocks[0], "bash", observation)
    _mini_summary(trajectory, info, messages)
    return trajectory


def _mini_summary(trajectory: Trajectory, info: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    """Exit status, submission, model, cost and token totals from `info` (falling back to the exit message)."""
    exit_extra = messages[-1].get("extra") if messages and messages[-1]["role"] == "exit" else None
    exit_extra = exit_extra if isinstance(exit_extra, dict) else {}
    trajectory.exit_status = info.get("exit_status") or exit_extra.get("exit_status")
    trajectory.submission = info.get("submission") or exit_extra.get("submission") or None
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    model_config = config.get("model") if isinstance(config.get("model"), dict) else {}
    trajectory.model = model_config.get("model_name")
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    turn_costs = [turn.cost for turn in trajectory.turns if turn.cost is not None]
    if isinstance(stats.get("instance_cost"), (int, float)):
        trajectory.cost = float(stats["instance_cost"])
    elif turn_costs:
        trajectory.cost = sum(turn_costs)
    calls = stats.get("api_calls")
    trajectory.api_calls = calls if isinstance(calls, int) else len(trajectory.turns)
    if model_config.get("cost_tracking") == "ignore_errors" and trajectory.cost == 0 and trajectory.api_calls:
        # mini refuses a zero cost for a call unless told to ignore cost errors, and then records 0.0 for every
        # call it could not price: no call of this run was priced, so its cost is unknown, not free (as ours).
        trajectory.cost = None
    trajectory.input_tokens = total_or_none([turn.input_tokens for turn in trajectory.turns])
    trajectory.output_tokens = total_or_none([turn.output_tokens for turn in trajectory.turns])
