"""The demo's offline model: an *oracle* policy that knows each task's ground-truth patch.

It is not a model and every output that uses it says so (model name `openai/oracle`). It drives both
scaffolds through their real clients like any model would: it first runs `git rev-parse HEAD^{tree}`,
recognises the repository by that content hash (so no task id ever enters the agent's prompt), then
reads the patched files, applies the ground-truth patch, runs the tests and submits. In RepoAnchor's
stage 1 it writes an INSTRUCTION.md naming the files instead of applying anything.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from repoanchor.anchor.instruction import FILENAME, REQUIRED_SECTIONS
from repoanchor.scaffolds.models.scripted_server import Reply

ORACLE_MODEL = "openai/oracle"
TREE_HASH = re.compile(r"\b[0-9a-f]{40}\b")
STAGE1_MARK = "Do NOT fix the task now"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


@dataclass
class Truth:
    patch: str
    test_command: str = "python -m pytest -q -p no:cacheprovider"
    files: list[str] = field(default_factory=list)
    """Existing files the patch changes (read before editing)."""
    issue: str = ""
    """The task's text: tells apart tasks that share a repository (several instances at one commit)."""


def patched_files(patch: str) -> list[str]:
    """Files a unified diff changes that exist before it (new files have nothing to read)."""
    files = []
    for block in patch.split("diff --git ")[1:]:
        header = block.splitlines()[0]
        if "\n--- /dev/null" not in block:
            files.append(header.split(" b/")[-1])
    return files


def _texts(messages: list[dict]) -> list[str]:
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [part.get("text") or json.dumps(part) for part in content if isinstance(part, dict)]
    return out


def _call(index: int, name: str, arguments: dict) -> dict:
    return {"id": f"oracle_{index}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class OraclePolicy:
    """A `ScriptedServer` responder: `ScriptedServer(responder=OraclePolicy(truths))`."""

    def __init__(self, truths: dict[str, Truth | list[Truth]]) -> None:
        self.truths = {tree: found if isinstance(found, list) else [found] for tree, found in truths.items()}
        """Repository tree hash (`git rev-parse HEAD^{tree}` of the task's base commit) -> its tasks' truths."""

    def __call__(self, body: dict) -> Reply:
        messages = body.get("messages", [])
        tools = {tool.get("function", {}).get("name") for tool in body.get("tools") or []}
        opencode = "read" in tools or "write" in tools
        turn = sum(1 for message in messages if message.get("role") == "assistant")
        user = next((t for m in messages if m.get("role") == "user" for t in _texts([m])), "")
        if turn == 0:
            return self._bash(0, "git rev-parse HEAD^{tree}", opencode)
        truth = self._identify(messages, user)
        if truth is None:
            return self._finish(turn, opencode, "oracle: this repository is not one I know; stopping.")
        plan = self._stage1_plan(truth, opencode) if STAGE1_MARK in user else self._solve_plan(truth, opencode)
        return plan[turn - 1] if turn - 1 < len(plan) else self._finish(turn, opencode, "oracle: done.")

    def _identify(self, messages: list[dict], user: str) -> Truth | None:
        for text in _texts(messages[2:]):
            for found in TREE_HASH.findall(text):
                candidates = self.truths.get(found, [])
                matching = [truth for truth in candidates if truth.issue and truth.issue.strip() in user]
                if matching or candidates:
                    return (matching or candidates)[0]
        return None

    def _solve_plan(self, truth: Truth, opencode: bool) -> list[Reply]:
        apply = f"git apply --whitespace=nowarn <<'ORACLE_PATCH'\n{truth.patch}\nORACLE_PATCH"
        return [
            self._bash(1, "cat " + " ".join(truth.files) if truth.files else "ls", opencode),
            self._bash(2, apply, opencode),
            self._bash(3, truth.test_command, opencode),
            self._finish(4, opencode, "oracle: applied the ground-truth patch."),
        ]

    def _stage1_plan(self, truth: Truth, opencode: bool) -> list[Reply]:
        files = "\n".join(f"- {path}: changed by the fix" for path in truth.files) or "- (new files only)"
        bodies = {
            "Repository map": "Explored by the oracle policy (it knows the ground truth).",
            "Candidate files": files,
            "Dependency and runtime-resolution map": "Not traced: the oracle reads the answer instead.",
            "Open uncertainties": "None for an oracle.",
            "Plan": "Apply the fix to the candidate files, then run the tests.",
        }
        text = "\n".join(f"## {title}\n{bodies[title]}\n" for title in REQUIRED_SECTIONS)
        write = f"cat > {FILENAME} <<'ORACLE_MAP'\n{text}ORACLE_MAP"
        return [
            self._bash(1, "cat " + " ".join(truth.files) if truth.files else "ls", opencode),
            self._bash(2, write, opencode),
            self._finish(3, opencode, f"oracle: wrote {FILENAME}."),
        ]

    @staticmethod
    def _bash(index: int, command: str, opencode: bool) -> Reply:
        arguments = {"command": command, "description": "oracle step"} if opencode else {"command": command}
        return Reply(f"oracle step {index}", tool_calls=[_call(index, "bash", arguments)])

    @classmethod
    def _finish(cls, index: int, opencode: bool, text: str) -> Reply:
        # OpenCode ends when the model stops calling tools; mini-swe-agent when the submit command runs.
        return Reply(text) if opencode else cls._bash(index, SUBMIT, opencode)
