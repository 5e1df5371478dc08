"""What every foreign-run reader returns: one `ImportedRun` per instance, and the problems it met.

A reader never stops at a bad item: a trajectory it cannot read, a predictions entry of the wrong shape or
a JSONL line that is not JSON becomes a problem naming the file (and line or field), and the batch goes on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from repoanchor.scaffolds.trajectories.trajectory import Trajectory


class SourceError(Exception):
    """A source that cannot be imported at all (no such folder, no runs in it, an unknown format)."""


class ImportedRun(BaseModel):
    instance_id: str
    source: str
    """The file the run was read from (its trajectory, or the predictions file when only a patch exists)."""
    model: str | None = None
    patch: str = ""
    exit_status: str | None = None
    infra_error: str | None = None
    """A kind (timeout, unreachable, rate_limit, server_error) when the harness says the model service failed."""
    cost: float | None = None
    trajectory: Trajectory | None = None
    raw_files: list[str] = Field(default_factory=list)
    """The harness's own files for this run, copied beside the normalised trajectory."""


class Batch(BaseModel):
    scaffold: str
    runs: list[ImportedRun] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


# The exception names harnesses record when the model service, not the agent, failed; litellm's names.
INFRA_ENDINGS = {
    "RateLimitError": "rate_limit", "Timeout": "timeout", "APITimeoutError": "timeout",
    "APIConnectionError": "unreachable", "ServiceUnavailableError": "unreachable",
    "InternalServerError": "server_error", "APIError": "server_error",
}  # fmt: skip


def infra_kind(exit_status: str | None, patch: str) -> str | None:
    """The infrastructure error an ending names, when it left no patch (a patch means the agent got far)."""
    if not exit_status or patch.strip():
        return None
    return next((kind for name, kind in INFRA_ENDINGS.items() if name in exit_status), None)


def read_json(path: Path, problems: list[str]) -> Any:
    """A JSON document, or None with the problem recorded (naming the file and where it broke)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        problems.append(f"{path}: cannot read: {error}")
    except json.JSONDecodeError as error:
        problems.append(f"{path}: not JSON at line {error.lineno} column {error.colno}: {error.msg}")
    except RecursionError:
        problems.append(f"{path}: JSON nested too deeply to read")
    return None


def json_lines(path: Path, problems: list[str]) -> list[tuple[int, object]]:
    """(1-based line number, value) of every non-blank line that is JSON; the others become problems."""
    values = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except (json.JSONDecodeError, RecursionError):
            problems.append(f"{path}:{number}: not a JSON line; left out")
    return values


class Prediction(NamedTuple):
    patch: str
    model: str | None
    """The entry's `model_name_or_path`, when it names one."""


def read_predictions(path: Path, problems: list[str]) -> dict[str, Prediction]:
    """instance_id -> its prediction, from SWE-bench predictions: a `preds.json` dict or list, or JSONL lines."""
    if path.suffix == ".jsonl":
        entries = [(f"{path}:{number}", row) for number, row in json_lines(path, problems)]
    else:
        document = read_json(path, problems)
        values = document.values() if isinstance(document, dict) else document if isinstance(document, list) else []
        entries = [(f"{path}: entry {n}", entry) for n, entry in enumerate(values)]
    predictions = {}
    for where, entry in entries:
        patch = entry.get("model_patch") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("instance_id"), str):
            problems.append(f"{where}: instance_id: missing or not text; left out")
        elif patch is not None and not isinstance(patch, str):
            problems.append(f"{where}: model_patch: must be text or null; left out")
        else:
            model = entry.get("model_name_or_path")
            predictions[entry["instance_id"]] = Prediction(patch or "", model if isinstance(model, str) else None)
    return predictions
