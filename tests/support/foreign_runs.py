"""Small, hand-written run folders of other harnesses, in the shapes their public code writes.

SWE-agent 1.x: `<id>/<id>.traj` (`trajectory` entries of response/thought/action/observation, `info` with
submission, exit_status and model_stats, `replay_config` as a JSON string) and `preds.json`; 0.x: flat
`<id>.traj` and `all_preds.jsonl`. OpenHands: `output.jsonl` lines of its evaluation `EvalOutput`, with the
history as an event list (`events`) or as [action, observation] pairs (`pairs`, older files).
"""

from __future__ import annotations

import json
from pathlib import Path

PATCH = (
    "diff --git a/src/pkg/core.py b/src/pkg/core.py\n--- a/src/pkg/core.py\n+++ b/src/pkg/core.py\n"
    "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
)
SWE_AGENT_ACTIONS = [
    ("find_file core.py", 'Found 1 matches for "core.py":\n/repo/src/pkg/core.py'),
    ("open src/pkg/core.py", "[File: /repo/src/pkg/core.py (1 lines total)]\n1:x = 1"),
    ("", ""),  # a response SWE-agent could not parse: a format error, nothing ran
    ("edit 1:1\nx = 2\nend_of_edit", "[File: /repo/src/pkg/core.py (1 lines total)]\n1:x = 2"),
    ("python -m pytest -q tests", "1 passed in 0.01s"),
    ("str_replace_editor view /repo/src/pkg/util.py", "1\tdef f(): pass"),
    ("submit", PATCH),
]


def swe_agent_traj(instance: str, *, exit_status: str = "submitted", submission: str | None = PATCH) -> dict:
    trajectory = [
        {"response": f"I will run {action!r}.", "thought": "thinking", "action": action, "observation": observation,
         "state": "{}", "execution_time": 0.1, "query": [], "extra_info": {}}
        for action, observation in SWE_AGENT_ACTIONS
    ]  # fmt: skip
    stats = {"instance_cost": 0.42, "tokens_sent": 5000, "tokens_received": 300, "api_calls": 7}
    info = {"submission": submission, "exit_status": exit_status, "swe_agent_version": "1.1.0", "model_stats": stats}
    replay = {"agent": {"model": {"name": "openai/gpt-4o", "per_instance_cost_limit": 3.0}}, "env": {}}
    return {"trajectory": trajectory, "history": [], "info": info, "replay_config": json.dumps(replay),
            "environment": "main"}  # fmt: skip


def write_swe_agent_run(folder: Path, instances: list[str], *, flat: bool = False, patch: str = PATCH) -> Path:
    """A 1.x run folder (per-instance folders, preds.json) or, `flat`, a 0.x one (all_preds.jsonl); every run
    submits `patch`."""
    folder.mkdir(parents=True)
    preds = {i: {"instance_id": i, "model_name_or_path": "gpt-4o", "model_patch": patch} for i in instances}
    for instance in instances:
        where = folder if flat else folder / instance
        where.mkdir(exist_ok=True)
        (where / f"{instance}.traj").write_text(json.dumps(swe_agent_traj(instance, submission=patch)))
    if flat:
        (folder / "all_preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds.values()))
    else:
        (folder / "preds.json").write_text(json.dumps(preds))
    return folder


def _action(event_id: int, action: str, args: dict) -> dict:
    return {"id": event_id, "timestamp": "2025-05-01T10:00:00", "source": "agent", "message": f"Running {action}",
            "action": action, "args": {**args, "thought": "let me look"}}  # fmt: skip


def _observation(event_id: int, cause: int, kind: str, content: str, exit_code: int | None = None) -> dict:
    extras = {"metadata": {"exit_code": exit_code, "pid": -1}} if exit_code is not None else {"path": "x"}
    return {"id": event_id, "timestamp": "2025-05-01T10:00:01", "source": "agent", "message": "done",
            "observation": kind, "content": content, "extras": extras, "cause": cause}  # fmt: skip


OPENHANDS_STEPS = [
    (_action(2, "run", {"command": "grep -rn 'x =' src", "is_input": False}), "run", "src/pkg/core.py:1:x = 1", 0),
    (_action(4, "read", {"path": "/workspace/repo/src/pkg/core.py"}), "read", "x = 1", None),
    (_action(6, "edit", {"path": "/workspace/repo/src/pkg/util.py", "command": "view"}), "edit", "def f()", None),
    (
        _action(
            8,
            "edit",
            {
                "path": "/workspace/repo/src/pkg/core.py",
                "command": "str_replace",
                "old_str": "x = 1",
                "new_str": "x = 2",
            },
        ),
        "edit",
        "edited",
        None,
    ),  # fmt: skip
    (_action(10, "run", {"command": "python -m pytest -q tests"}), "run", "1 failed", 1),
]


def openhands_row(instance: str, *, pairs: bool = False, error: str | None = None, patch: str = PATCH) -> dict:
    system = {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands"}}
    task = {"id": 1, "source": "user", "action": "message", "args": {"content": "Fix the issue"}}
    finish = {"id": 12, "source": "agent", "action": "finish", "args": {"final_thought": "done"}}
    steps = [(action, _observation(action["id"] + 1, action["id"], kind, content, code))
             for action, kind, content, code in OPENHANDS_STEPS]  # fmt: skip
    history = [[a, o] for a, o in steps] if pairs else [system, task, *(e for pair in steps for e in pair), finish]
    metadata = {"agent_class": "CodeActAgent", "llm_config": {"model": "litellm_proxy/claude-sonnet"},
                "max_iterations": 100, "eval_output_dir": "out", "start_time": "2025-05-01"}  # fmt: skip
    metrics = {"accumulated_cost": 0.25, "accumulated_token_usage": {"prompt_tokens": 4000, "completion_tokens": 200}}
    return {"instance_id": instance, "test_result": {"git_patch": patch}, "instruction": "Fix the issue",
            "metadata": metadata, "history": history, "metrics": metrics, "error": error}  # fmt: skip
