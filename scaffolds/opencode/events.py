"""OpenCode's JSON event stream as the adapter watches it: read into the events file as it comes, followed for the
steps and cost it shows (a limit reached sets `Progress.stop`), and an `error` event turned into the
infrastructure error behind it."""

from __future__ import annotations

import json
import queue
from dataclasses import dataclass
from pathlib import Path

from repoanchor.scaffolds.models.relay import ModelRelay
from repoanchor.scaffolds.models.relay_handler import classify
from repoanchor.scaffolds.records import InfraError, Limits


@dataclass
class Progress:
    """What the event stream has shown so far."""

    session_id: str | None = None
    steps: int = 0
    cost: float = 0.0
    error: dict | None = None
    stop: str | None = None
    """Why the adapter stopped OpenCode: a limit's description; None when it ended by itself."""
    infra: InfraError | None = None
    ending: tuple[str, str] | None = None
    """(ending, message) when the model refused a request for what it held (see scaffolds.models.model)."""


def read_events(process, events: Path, lines: queue.Queue) -> None:
    """The reader thread: every stdout line goes to the events file at once (a crash loses nothing)."""
    try:
        with events.open("ab") as sink:
            for line in process.lines():
                sink.write(line)
                sink.flush()
                lines.put(line)
    except Exception as error:  # the stream broke (the engine went away): the main loop raises it
        lines.put(InfraError("environment_exec", f"OpenCode's output stream broke: {error}"))
    finally:
        lines.put(None)


def follow(line: bytes, progress: Progress, limits: Limits, priced: bool) -> None:
    """Update `progress` with one event line; set `stop` when a step or cost limit is reached."""
    try:
        event = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return
    if not isinstance(event, dict):
        return
    progress.session_id = progress.session_id or event.get("sessionID")
    part = event.get("part") if isinstance(event.get("part"), dict) else {}
    if event.get("type") == "error":
        progress.error = event.get("error") if isinstance(event.get("error"), dict) else {"name": "UnknownError"}
    if event.get("type") != "step_finish":
        return
    progress.steps += 1
    if isinstance(part.get("cost"), (int, float)):
        progress.cost += part["cost"]
    if part.get("reason") == "stop":
        return  # the model is done: no further call to limit
    if limits.steps and progress.steps >= limits.steps:
        progress.stop = f"step limit {limits.steps} reached"
    elif priced and limits.cost and progress.cost >= limits.cost:
        progress.stop = f"cost limit {limits.cost:g} USD reached ({progress.cost:.6f} USD)"


def model_failure(relay: ModelRelay, error: dict | None) -> InfraError:
    """The infrastructure error behind a failing run: the relay's own observation when it has one."""
    if relay.consecutive_failures and relay.last_error is not None:
        return relay.last_error
    error = error or {}
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    message = f"OpenCode reported {error.get('name', 'an error')}: {data.get('message') or error}"
    status = data.get("statusCode")
    kind = classify(status) if isinstance(status, int) else None
    return InfraError(kind or "opencode_error", message)
