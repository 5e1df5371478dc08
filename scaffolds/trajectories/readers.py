"""`read_trajectory(path)`: detect a scaffold's trajectory format and convert it to a normalised `Trajectory`.

Formats: our own normalised trajectory.json, mini-swe-agent v1 (text: one ```bash block per response),
mini-swe-agent v2 (OpenAI tool calls), OpenCode `run --format json` event streams (JSON lines) and `opencode
export` documents. Anything else, and any truncated or malformed file, raises `TrajectoryError` naming the
file; `read_many` keeps going past those.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from repoanchor.scaffolds.trajectories.mini_swe_agent import is_mini_message_list, read_mini_swe_agent
from repoanchor.scaffolds.trajectories.opencode_events import read_opencode_events, read_opencode_export
from repoanchor.scaffolds.trajectories.trajectory import TRAJECTORY_FORMAT, Trajectory, TrajectoryError


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
        # A JSON-lines event stream fails as one document with "Extra data" right after its first line, or at
        # once where the CLI printed a line of plain text (a warning) before its events.
        if exc.msg == "Extra data" or _text_then_events(text):
            events, notes = _json_lines(path, text)
            trajectory = read_opencode_events(path, events)
            return trajectory.model_copy(update={"notes": notes}) if notes else trajectory
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


def _json_lines(path: Path, text: str) -> tuple[list[Any], list[str]]:
    """One JSON value per non-blank line, and notes on the lines left out: a line of plain text (OpenCode prints
    some warnings to stdout, between its events) and a last line cut off mid-write (a run that crashed). A line
    that starts as JSON and is broken anywhere else is an error: the stream itself is damaged."""
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    values, notes = [], []
    for position, (number, line) in enumerate(lines):
        try:
            values.append(_event(path, number, json.loads(line)))
        except RecursionError:
            raise TrajectoryError(path, f"line {number}: JSON nested too deeply to read") from None
        except json.JSONDecodeError as exc:
            if not line.lstrip().startswith(("{", "[")):
                notes.append(f"line {number} is not a JSON event, left out: {line.strip()[:NOTE_CHARS]}")
            elif position == len(lines) - 1 and values:
                notes.append(f"line {number}, the last, is cut off ({exc.msg}), left out")
            else:
                raise TrajectoryError(path, f"line {number} is not valid JSON (truncated stream?): {exc.msg}") from exc
    return values, notes


NOTE_CHARS = 160


def _event(path: Path, number: int, value: Any) -> Any:
    """`value`, line `number` of a stream, when it is an OpenCode event (an object with a string `type`)."""
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return value
    if isinstance(value, dict) and "instance_id" in value and "history" in value:
        raise TrajectoryError(path, f"line {number}: a run of an OpenHands output.jsonl: `repoanchor import` the "
                              "file, then read the runs it writes")  # fmt: skip
    raise TrajectoryError(path, f"line {number}: not an OpenCode event (no 'type')")


def _text_then_events(text: str) -> bool:
    """A stream whose first line is plain text: no line starts as JSON but is not an event (a pretty-printed
    document's first line, `{`, is not one), and some line is an event (an object with a string `type`)."""
    lines = [line for line in text.splitlines() if line.strip()]
    events = False
    for position, line in enumerate(lines):
        if not line.lstrip().startswith(("{", "[")):
            continue
        try:
            value = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            if position < len(lines) - 1:
                return False
            continue  # a last line cut off mid-write: `_json_lines` notes it
        events = events or (isinstance(value, dict) and isinstance(value.get("type"), str))
    return events


def _read_document(path: Path, document: Any) -> Trajectory:
    """Pick the reader from the document's shape."""
    if isinstance(document, list) and document and all(isinstance(item, dict) and "type" in item for item in document):
        return read_opencode_events(path, document)  # an event stream saved as a JSON array
    if is_mini_message_list(document):  # mini's bare message list (its agent.messages dumped as is)
        return read_mini_swe_agent(path, {"messages": document})
    if not isinstance(document, dict):
        raise TrajectoryError(path, f"unrecognised trajectory: top level is a JSON {type(document).__name__}")
    if isinstance(document.get("type"), str):
        return read_opencode_events(path, [document])  # a one-line event stream
    if document.get("format") == TRAJECTORY_FORMAT:  # our own trajectory.json, beside every run's scaffold file
        return Trajectory.model_validate({**document, "source_path": str(path)})
    messages = document.get("messages")
    if not isinstance(messages, list) and isinstance(document.get("trajectory"), list):
        raise TrajectoryError(path, "a SWE-agent trajectory (.traj): `repoanchor import` its run folder, then read "
                              "the runs it writes")  # fmt: skip
    if not isinstance(messages, list):
        raise TrajectoryError(path, "unrecognised trajectory: no 'messages' list")
    if messages and isinstance(messages[0], dict) and "parts" in messages[0]:
        return read_opencode_export(path, document)
    if str(document.get("trajectory_format", "")).startswith("mini-swe-agent") or "info" in document:
        return read_mini_swe_agent(path, document)
    raise TrajectoryError(path, "unrecognised trajectory: neither mini-swe-agent nor an OpenCode export")
