"""A SWE-agent run folder: one `<instance_id>.traj` per instance (1.x: in `<instance_id>/`; 0.x: flat), with
`preds.json` (1.x) or `all_preds.jsonl` (0.x) beside them.

A `.traj` holds `trajectory` (one entry per model response: `response`, `thought`, `action`, `observation`),
`info` (`submission`, `exit_status`, `model_stats`: `instance_cost`, `tokens_sent`, `tokens_received`,
`api_calls`) and, in 1.x, `replay_config` (the run's config as a JSON string, whose `agent.model.name` is
the model). SWE-agent's own file tools are mapped to the typed tools the step parser knows (`read`, `grep`,
`edit`), so its steps are labelled like OpenCode's; anything else is a shell command.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import yaml

from repoanchor.evals.interop.imports.runs import (
    Batch,
    ImportedRun,
    Prediction,
    infra_kind,
    read_json,
    read_predictions,
)
from repoanchor.scaffolds.trajectories.trajectory import Action, ModelTurn, Trajectory, excerpt

SCAFFOLD = "swe-agent"
READS = {"open", "goto", "scroll_up", "scroll_down"}
SEARCHES = {"find_file", "search_dir", "search_file"}
EDITS = {"edit", "create", "insert", "append"}
EDITOR_READS = {"view"}  # str_replace_editor's sub-commands other than view change the file


def looks_like(source: Path) -> bool:
    return source.is_dir() and any(source.rglob("*.traj"))


def read_swe_agent(folder: Path) -> Batch:
    batch = Batch(scaffold=SCAFFOLD)
    predictions: dict[str, Prediction] = {}
    for name in ("preds.json", "all_preds.jsonl"):
        if (folder / name).is_file():
            predictions |= read_predictions(folder / name, batch.problems)
    run_models: dict[Path, str | None] = {}
    for path in sorted(folder.rglob("*.traj")):
        known = len(batch.problems)
        document = read_json(path, batch.problems)
        if len(batch.problems) > known:  # unreadable, already named (a document that is JSON null is not)
            continue
        if not isinstance(document, dict) or not isinstance(document.get("trajectory"), list):
            batch.problems.append(f"{path}: trajectory: missing or not a list; left out")
            continue
        batch.runs.append(_run(path, document, predictions, _args_model(path, folder, run_models, batch.problems)))
    return batch


def _args_model(path: Path, folder: Path, known: dict[Path, str | None], problems: list[str]) -> str | None:
    """0.x: `agent.model.model_name` of the nearest `args.yaml` at or above the .traj (up to `folder`), the run's
    config (its predictions' `model_name_or_path` is the run's name, not the model's)."""
    for place in [path.parent, *path.parent.parents]:
        if place not in known:
            known[place] = _model_in_args(place / "args.yaml", problems)
        if known[place] is not None or place == folder or not place.is_relative_to(folder):
            return known[place]
    return None


def _model_in_args(args: Path, problems: list[str]) -> str | None:
    if not args.is_file():
        return None
    try:
        config = yaml.safe_load(args.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        reason = str(error).splitlines()[0]
        problems.append(f"{args}: not readable YAML ({reason}); its run's model is not known from it")
        return None
    agent = config.get("agent") if isinstance(config, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("model_name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else None


def _run(path: Path, document: dict, predictions: dict[str, Prediction], args_model: str | None) -> ImportedRun:
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    instance = path.name.removesuffix(".traj")
    trajectory = to_trajectory(path, document, instance)
    trajectory.model = trajectory.model or args_model
    prediction = predictions.get(instance)
    submission = info.get("submission") if isinstance(info.get("submission"), str) else ""
    patch = prediction.patch if prediction else submission
    return ImportedRun(
        instance_id=instance, source=str(path), model=trajectory.model, patch=patch or "",
        exit_status=trajectory.exit_status, infra_error=infra_kind(trajectory.exit_status, patch or ""),
        cost=trajectory.cost, trajectory=trajectory, raw_files=[str(path)],
    )  # fmt: skip


def to_trajectory(path: Path, document: dict, instance: str) -> Trajectory:
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    trajectory = Trajectory(source_format="swe-agent", source_path=str(path), instance_id=instance)
    trajectory.model = _model_name(document.get("replay_config"))
    trajectory.exit_status = info.get("exit_status") if isinstance(info.get("exit_status"), str) else None
    trajectory.submission = info.get("submission") if isinstance(info.get("submission"), str) else None
    for entry in document["trajectory"]:
        entry = entry if isinstance(entry, dict) else {}
        turn = ModelTurn(index=len(trajectory.turns))
        trajectory.turns.append(turn)
        action = entry.get("action") if isinstance(entry.get("action"), str) else ""
        if not action.strip():  # nothing parsed from the response: SWE-agent's format error, nothing ran
            turn.format_error = True
            trajectory.format_errors += 1
            continue
        tool, tool_input = map_action(action)
        output, truncated = excerpt(str(entry.get("observation") or ""))
        trajectory.actions.append(
            Action(index=len(trajectory.actions), tool=tool, command=action if tool == "bash" else None,
                   tool_input=tool_input, output_excerpt=output, output_truncated=truncated, turn_index=turn.index)
        )  # fmt: skip
        turn.n_actions = 1
    cost, sent, received = stats.get("instance_cost"), stats.get("tokens_sent"), stats.get("tokens_received")
    trajectory.cost = float(cost) if isinstance(cost, (int, float)) else None
    trajectory.input_tokens = sent if isinstance(sent, int) else None
    trajectory.output_tokens = received if isinstance(received, int) else None
    calls = stats.get("api_calls")
    trajectory.api_calls = calls if isinstance(calls, int) else len(trajectory.turns)
    return trajectory


def map_action(action: str) -> tuple[str, dict[str, Any]]:
    """(tool, tool input) for one SWE-agent action: its file tools as typed tools, the rest as shell."""
    try:
        words = shlex.split(action.strip().splitlines()[0])
    except ValueError:
        words = action.split()
    name, rest = (words[0], words[1:]) if words else ("", [])
    if name == "str_replace_editor" and len(rest) >= 2:
        return ("read" if rest[0] in EDITOR_READS else "edit"), {"command": action, "file_path": rest[1]}
    if name in READS or name in EDITS:
        tool = "read" if name in READS else "edit"
        path = rest[0] if rest and name in ("open", "create") else None
        return tool, {"command": action, **({"file_path": path} if path else {})}
    if name in SEARCHES:
        return "grep", {"command": action}
    return "bash", {"command": action}


def _model_name(replay_config: Any) -> str | None:
    """`agent.model.name` of the run's config, which 1.x stores as a JSON string (0.x has none)."""
    if isinstance(replay_config, str):
        try:
            replay_config = json.loads(replay_config)
        except (json.JSONDecodeError, RecursionError):
            return None
    agent = replay_config.get("agent") if isinstance(replay_config, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    return model.get("name") if isinstance(model, dict) and isinstance(model.get("name"), str) else None
