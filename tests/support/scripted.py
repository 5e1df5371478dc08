"""Scripted model turns for the scaffold tests: OpenAI tool calls the scripted server plays back."""

from __future__ import annotations

import json

from repoanchor.scaffolds.models.scripted_server import Reply

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
# An INSTRUCTION.md with every required section, for the bug repository of tests/support/bug_repo.py.
INSTRUCTION_TEXT = """## Repository map
calc.py holds the arithmetic helpers; test_calc.py tests them.
## Candidate files and their roles
- calc.py: defines add() and double()
## Dependency and runtime-resolution map
test_calc.py -> calc.py (plain import)
## Open uncertainties
None.
## Plan
Make add() return a + b; run the tests.
"""


def tool_call(name: str, arguments: dict, index: int = 0) -> dict:
    return {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def turn(command: str, index: int = 0) -> Reply:
    """One mini-swe-agent turn: a single bash tool call."""
    return Reply(f"THOUGHT: step {index}", tool_calls=[tool_call("bash", {"command": command}, index)])


def turns(*commands: str, delay: float = 0.0) -> list[Reply]:
    replies = [turn(command, index) for index, command in enumerate(commands)]
    for reply in replies:
        reply.delay = delay
    return replies


def write_file_command(path: str, text: str) -> str:
    """A bash command that writes `text` to `path` exactly (quoted heredoc: no expansion)."""
    return f"cat > {path} <<'SCRIPTED_EOF'\n{text}\nSCRIPTED_EOF"
