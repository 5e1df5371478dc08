"""Label a run's actions in order, each knowing the scripts the run wrote before it.

An agent writes `fix.py` (or `reproduce.py`) with a heredoc, or OpenCode's `write` tool, and runs it a step
later: STEPS.md labels a Python script that writes files an edit and one that runs code a test, which only
the script's content can tell (its name only guesses). `labels_in_order` keeps what each action wrote and
hands it to `classify`; a command alone is still labelled by `classify` as before.
"""

from __future__ import annotations

from collections.abc import Iterable

from repoanchor.scaffolds.steps.classify import Label, classify
from repoanchor.scaffolds.steps.project_cli import project_stems
from repoanchor.scaffolds.steps.shell import ShellParseError, split_commands
from repoanchor.scaffolds.trajectories.trajectory import Action

WRITE_TOOLS = ("write",)
"""OpenCode's tool that writes a whole file (`filePath`, `content`)."""


def action_text(action: Action) -> str:
    """The command of a bash action, or the tool input of a typed tool (as compact text; unset fields, such as
    the Nones of OpenHands' editor arguments, left out)."""
    if action.command is not None:
        return action.command
    return " ".join(f"{key}={value}" for key, value in sorted(action.tool_input.items()) if value not in (None, ""))


def labels_in_order(actions: Iterable[Action], instance_id: str | None = None) -> list[Label]:
    """One label per action, in order; `python X.py` labelled by what X holds where an earlier action wrote X,
    and the programs named after `instance_id`'s repository as its CLI (`project_cli.py`)."""
    written: dict[str, str] = {}
    project = project_stems(instance_id)
    labels = []
    for action in actions:
        text = action_text(action)
        labels.append(classify(action.tool, text, written, project))
        written.update(files_written(action, text))
    return labels


def files_written(action: Action, text: str) -> dict[str, str]:
    """Files whose whole content this action wrote: a heredoc redirected to a file, OpenCode's `write`."""
    tool = (action.tool or "bash").lower()
    if tool in WRITE_TOOLS:
        path, content = action.tool_input.get("filePath"), action.tool_input.get("content")
        return {path: content} if isinstance(path, str) and isinstance(content, str) else {}
    if tool not in ("bash", "shell", "sh") or "<<" not in text:  # only a heredoc gives a file's content
        return {}
    try:
        commands = split_commands(text)
    except ShellParseError:
        return {}
    return {target: cmd.heredoc for cmd in commands if cmd.heredoc is not None for target in cmd.writes}
