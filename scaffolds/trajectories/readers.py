"""`read_trajectory(path)`: detect a scaffold's trajectory format and convert it to a normalised `Trajectory`.

Formats: our own normalised trajectory.json, mini-swe-agent v1 (text: one ```bash block per response),
mini-swe-agent v2 (OpenAI tool calls), OpenCode `run --format json` event streams (JSON lines) and `opencode
export` documents. Anything else, and any truncated or malformed file, raises `TrajectoryError` naming the
file; `read_many` keeps going past those.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from repoanchor.scaffolds.trajectories.opencode_events import read_opencode_events, read_opencode_export
from repoanchor.scaffolds.trajectories.trajectory import (
    TRAJECTORY_FORMAT,
    Action,
    ModelTurn,
    Trajectory,
    TrajectoryError,
    excerpt,
    total_or_none,
)

# mini-swe-agent 1.x used ```bash; 2.x text mode uses ```mswea_bash_command. Same rule: exactly one block.
ACTION_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
OUTPUT_TAGS = re.compile(r"</?output>")


class BatchResult(NamedTuple):
    """What `read_many` returns: the files that parsed and, separately, the errors of those that did not."""

    trajectories: list[Trajectory]
    errors: list[TrajectoryError]


def read_many(paths: list[str | Path]) -> BatchResult:
    """Read every path; a bad file is recorded in `errors` and the batch continues with the others."""
    result = BatchResult([], [])
    for path in paths:
        try:
            result.trajectories.append(read_trajectory(path))
        except TrajectoryError as error:
            result.errors.append(error)
    return result


def read_trajectory(path: str | Path) -> Trajectory:
    """Read one scaffold trajectory file of any supported format."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TrajectoryError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise TrajectoryError(path, f"cannot read: {exc.strerror or exc}") from exc
    if not text.strip():
        raise TrajectoryError(path, "empty file")
    try:
        document = json.loads(text)
    except RecursionError:
        raise TrajectoryError(path, "JSON nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        # A JSON-lines event stream fails as one document with "Extra data" right after its first line.
        if exc.msg == "Extra data":
            return read_opencode_events(path, _json_lines(path, text))
        raise TrajectoryError(path, _describe_json_error(exc, text)) from exc
    try:
        return _read_document(path, document)
    except ValidationError as exc:  # a field of the right name but the wrong type (an instance_id that is a dict)
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "document"
        raise TrajectoryError(path, f"unrecognised trajectory: {where}: {first['msg']}") from None


def _describe_json_error(exc: json.JSONDecodeError, text: str) -> str:
    """Tell a file cut off mid-write apart from one that is not JSON at all."""
    where = f"line {exc.lineno} column {exc.colno}"
    if text.lstrip()[:1] in ("{", "[") and exc.pos >= len(text.rstrip()) - 1:
        return f"truncated JSON: the document ends unexpectedly at {where} ({exc.msg})"
    return f"not valid JSON at {where}: {exc.msg}"


def _json_lines(path: Path, text: str) -> list[Any]:
    """Parse one JSON value per non-blank line; a bad line (e.g. a half-written last one) is an error."""
    values = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except RecursionError:
            raise TrajectoryError(path, f"line {line_number}: JSON nested too deeply to read") from None
        except json.JSONDecodeError as exc:
            raise TrajectoryError(path, f"line {line_number} is not valid JSON (truncated stream?): {exc.msg}") from exc
    return values


def _read_document(path: Path, document: Any) -> Trajectory:
    """Pick the reader from the document's shape."""
    if isinstance(document, list) and document and all(isinstance(item, dict) and "type" in item for item in document):
        return read_opencode_events(path, document)  # an event stream saved as a JSON array
    if not isinstance(document, dict):
        raise TrajectoryError(path, f"unrecognised trajectory: top level is a JSON {type(document).__name__}")
    if isinstance(document.get("type"), str):
        return read_opencode_events(path, [document])  # a one-line event stream
    if document.get("format") == TRAJECTORY_FORMAT:  # our own trajectory.json, beside every run's scaffold file
        return Trajectory.model_validate({**document, "source_path": str(path)})
    messages = document.get("messages")
    if not isinstance(messages, list):
        raise TrajectoryError(path, "unrecognised trajectory: no 'messages' list")
    if messages and isinstance(messages[0], dict) and "parts" in messages[0]:
        return read_opencode_export(path, document)
    if str(document.get("trajectory_format", "")).startswith("mini-swe-agent") or "info" in document:
        return read_mini_swe_agent(path, document)
    raise TrajectoryError(path, "unrecognised trajectory: neither mini-swe-agent nor an OpenCode export")


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
    return OUTPUT_TAGS.sub("", RETURNCODE.sub("", content)).strip("\n"), returncode


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
    messages = data["messages"]
    if not all(isinstance(message, dict) and "role" in message for message in messages):
        raise TrajectoryError(path, "mini-swe-agent trajectory: every message needs a 'role'")
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    tool_mode = any(message["role"] == "tool" or message.get("tool_calls") for message in messages)
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
