"""An OpenHands SWE-bench `output.jsonl`: one line per instance (its evaluation harness's `EvalOutput`).

A line holds `instance_id`, `test_result.git_patch`, `metadata.llm_config.model`, `history` (serialised
events: actions with `action` and `args`, observations with `observation`, `content`, `extras` and `cause`,
the id of the action they answer; older files hold `[action, observation]` pairs), `metrics`
(`accumulated_cost`, `accumulated_token_usage`) and `error`. Actions map to typed tools the step parser
knows: `run` is a shell command, `read` and the editor's `view` read a file, other edits edit it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repoanchor.evals.interop.imports.runs import Batch, ImportedRun, json_lines
from repoanchor.scaffolds.trajectories.trajectory import Action, ModelTurn, Trajectory, excerpt

SCAFFOLD = "openhands"
TOOLS = {"run": "bash", "read": "read", "edit": "edit", "run_ipython": "ipython", "browse": "browse"}
# Errors of the sandbox or the model service, not of the agent (OpenHands' runtime and retry messages).
INFRA_WORDS = {"runtime": "runtime", "timeout": "timeout", "timed out": "timeout", "connection": "unreachable",
               "maximum retries": "server_error", "ratelimit": "rate_limit", "rate limit": "rate_limit"}  # fmt: skip


OUTPUT_FILE = "output.jsonl"
"""What OpenHands' SWE-bench evaluation writes in its `eval_output_dir`."""


def looks_like(source: Path) -> bool:
    return (source.is_file() and source.suffix == ".jsonl") or (source.is_dir() and (source / OUTPUT_FILE).is_file())


def read_openhands(path: Path) -> Batch:
    """`path`: the output.jsonl, or the evaluation's output folder holding it."""
    path = path / OUTPUT_FILE if path.is_dir() else path
    batch = Batch(scaffold=SCAFFOLD)
    for number, row in json_lines(path, batch.problems):
        if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str):
            batch.problems.append(f"{path}:{number}: instance_id: missing or not text; left out")
            continue
        test_result = row.get("test_result") if isinstance(row.get("test_result"), dict) else {}
        patch = test_result.get("git_patch") if isinstance(test_result.get("git_patch"), str) else ""
        trajectory = to_trajectory(f"{path}:{number}", row)
        error = row.get("error") if isinstance(row.get("error"), str) else None
        batch.runs.append(
            ImportedRun(
                instance_id=row["instance_id"], source=f"{path}:{number}", model=trajectory.model, patch=patch,
                exit_status=trajectory.exit_status, infra_error=_infra(error, patch), cost=trajectory.cost,
                trajectory=trajectory,
            )
        )  # fmt: skip
    return batch


def to_trajectory(source: str, row: dict) -> Trajectory:
    metadata = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    llm = metadata.get("llm_config") if isinstance(metadata.get("llm_config"), dict) else {}
    trajectory = Trajectory(source_format="openhands", source_path=source, instance_id=row["instance_id"])
    trajectory.model = llm.get("model") if isinstance(llm.get("model"), str) else None
    events = _events(row.get("history"))
    answers = {event.get("cause"): event for event in events if "observation" in event and "cause" in event}
    for event in events:
        if event.get("source") == "agent" and isinstance(event.get("action"), str):
            _add(trajectory, event, answers.get(event.get("id")))
    _summary(trajectory, row, events)
    return trajectory


def _events(history: Any) -> list[dict]:
    """The history as one event list; old files pair each action with its observation."""
    events: list[dict] = []
    for item in history if isinstance(history, list) else []:
        pair = item if isinstance(item, (list, tuple)) else [item]
        events += [event for event in pair if isinstance(event, dict)]
    return events


def _add(trajectory: Trajectory, event: dict, answer: dict | None) -> None:
    """One model turn per agent action; the actions that run something become `Action`s."""
    turn = ModelTurn(index=len(trajectory.turns))
    trajectory.turns.append(turn)
    tool = TOOLS.get(event["action"])
    if tool is None:  # message, think, finish, system, recall: nothing ran
        return
    args = event.get("args") if isinstance(event.get("args"), dict) else {}
    if tool == "edit" and args.get("command") == "view":
        tool = "read"
    tool_input = {key: value for key, value in args.items() if key != "thought"}
    if isinstance(args.get("path"), str):
        tool_input["file_path"] = args["path"]
    extras = (answer or {}).get("extras") if isinstance((answer or {}).get("extras"), dict) else {}
    exit_code = (extras.get("metadata") or {}).get("exit_code") if isinstance(extras.get("metadata"), dict) else None
    output, truncated = excerpt(str((answer or {}).get("content") or ""))
    command = args.get("command") if tool == "bash" and isinstance(args.get("command"), str) else None
    trajectory.actions.append(
        Action(index=len(trajectory.actions), tool=tool, command=command, tool_input=tool_input,
               output_excerpt=output, output_truncated=truncated,
               exit_code=exit_code if isinstance(exit_code, int) and exit_code >= 0 else None, turn_index=turn.index)
    )  # fmt: skip
    turn.n_actions = 1


def _summary(trajectory: Trajectory, row: dict, events: list[dict]) -> None:
    metrics = row.get("metrics") if isinstance(row.get("metrics"), dict) else {}
    usage = metrics.get("accumulated_token_usage") if isinstance(metrics.get("accumulated_token_usage"), dict) else {}
    cost = metrics.get("accumulated_cost")
    trajectory.cost = float(cost) if isinstance(cost, (int, float)) else None
    trajectory.input_tokens = usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else None
    trajectory.output_tokens = (
        usage.get("completion_tokens") if isinstance(usage.get("completion_tokens"), int) else None
    )
    trajectory.api_calls = len(trajectory.turns)
    error = row.get("error") if isinstance(row.get("error"), str) else None
    finished = any(event.get("action") == "finish" for event in events)
    trajectory.exit_status = error.splitlines()[0][:200] if error else "Finished" if finished else "Stopped"


def _infra(error: str | None, patch: str) -> str | None:
    """An infrastructure kind for an error that left no patch and names the sandbox or the service."""
    if not error or patch.strip():
        return None
    lowered = error.lower()
    return next((kind for word, kind in INFRA_WORDS.items() if word in lowered), None)
