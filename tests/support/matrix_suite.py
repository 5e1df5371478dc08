"""A tiny suite folder and a deterministic offline model for run-matrix tests.

Matrix units run in worker processes, in any order, any number of times (retries, resumes), so the
scripted model cannot be a shared queue: `oracle` answers from the conversation itself. The reply is
turn i of a fixed script, i = the number of assistant messages already in the request; the script is
the anchor stage-1 one (write INSTRUCTION.md, submit) when the first user message is a stage-1 prompt,
else the fix (sed, submit). Every run of a unit therefore sees exactly the same answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

from repoanchor.scaffolds.models.scripted_server import Reply
from tests.support.bug_repo import FIX_SED, ISSUE, make_bug_repo
from tests.support.scripted import INSTRUCTION_TEXT, SUBMIT, turn, write_file_command

STAGE1_MARKER = "first of two stages"
SCRIPTS = {
    "stage1": [write_file_command("INSTRUCTION.md", INSTRUCTION_TEXT), SUBMIT],
    "solve": [FIX_SED, SUBMIT],
}


def by_turn(script_for: Callable[[str], list[str]], delay: float = 0.0) -> Callable[[dict], Reply]:
    """A responder answering turn i of `script_for(first user message)`, i = assistant messages so far;
    turns after the first wait `delay` seconds."""

    def respond(body: dict) -> Reply:
        messages = body.get("messages", [])
        first_user = next((m.get("content") for m in messages if m.get("role") == "user"), "")
        script = script_for(str(first_user))
        index = sum(1 for message in messages if message.get("role") == "assistant")
        if index >= len(script):
            raise RuntimeError(f"the script has no turn {index}")
        reply = turn(script[index], index)
        reply.delay = delay if index else 0.0
        return reply

    return respond


oracle = by_turn(lambda first_user: SCRIPTS["stage1" if STAGE1_MARKER in first_user else "solve"])


def worker_killer(marker: Path, delay: float = 1.0) -> Callable[[dict], Reply]:
    """Exactly one run (the first to reach its first command) kills the process running the agent, its
    worker; every other run solves the task, `delay` a turn."""
    first = f"mkdir {marker} 2>/dev/null && kill -9 $PPID || true"
    return by_turn(lambda _: [first, *SCRIPTS["solve"]], delay=delay)


def make_suite(root: Path, count: int = 3) -> Path:
    """`root`/suite: tasks.jsonl with `count` tasks, each on its own copy of the bug repository."""
    suite = root / "suite"
    rows = []
    for number in range(1, count + 1):
        instance = f"demo__calc-{number}"
        make_bug_repo(suite / "repos" / instance)
        rows.append(
            {
                "instance_id": instance,
                "problem_statement": f"{ISSUE} (report {number})",
                "base_commit": "HEAD",
                "repoanchor_suite": "original",
                "repoanchor_repo": f"repos/{instance}/calc",
                "repoanchor_source_instance": instance,
            }
        )
    (suite / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return suite


def write_config(path: Path, api_base: str, **fields) -> Path:
    """A matrix YAML on `suite` next to it: 2 conditions (plain, anchored with hints) × 2 repeats by default."""
    config = {
        "suites": ["suite"],
        "scaffolds": ["mini"],
        "models": [{"name": "scripted", "model": "openai/scripted", "api_base": api_base}],
        "conditions": [{"name": "plain"}, {"name": "anchor", "anchor": True, "hints": "structural"}],
        "repeats": 2,
        # The scripted server has no price: a cost limit could not bind, so it is off, as a user must say.
        "limits": {"steps": 10, "wall_seconds": 120, "cost": 0},
        "workers": 2,
        "out": "out",
        # Scripted replies whose every command is known: on the host (a model would get its image).
        "environment": {"kind": "local"},
        **fields,
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def result_files(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted((out / "units").glob("*/result.json"))}


TIMING = {"finished_at", "wall_seconds"}


def comparable(record: dict) -> dict:
    """A result without the fields that differ between identical runs (clock times)."""
    return {
        key: comparable(value) if isinstance(value, dict) else value
        for key, value in record.items()
        if key not in TIMING
    }


def remove_orphaned_scratch() -> int:
    """Delete the run folders that SIGKILLed workers left in the temp folder (a killed process cannot clean up;
    the tests that kill must): those of processes that are gone (`scratch.sweep_orphans`). Returns how many."""
    from repoanchor.scaffolds.environments.scratch import sweep_orphans

    return len(sweep_orphans())
