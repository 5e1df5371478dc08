"""`MiniEnvironment`: one of our `Environment`s behind mini-swe-agent's environment protocol.

mini-swe-agent's agent calls `execute(action)`, `get_template_vars()` and `serialize()`. Commands go to our
environment (local checkout or container) with the run's command timeout, and the submit protocol is mini's own:
a command whose output starts with the marker line and exits 0 ends the run with `Submitted`.
"""

from __future__ import annotations

import platform
import shlex
from typing import Any

from repoanchor.scaffolds.environments.local import Environment

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


class MiniEnvironment:
    def __init__(self, env: Environment, command_timeout: float) -> None:
        self.env = env
        self.timeout = command_timeout or None  # Limits: 0 means no limit
        self.config = {"name": env.name, "workdir": env.workdir, "command_timeout": self.timeout}

    def execute(self, action: dict, cwd: str = "", *, timeout: float | None = None) -> dict[str, Any]:
        command = action.get("command", "")
        if cwd:  # mini's DefaultAgent never passes one, but the protocol allows it
            command = f"cd {shlex.quote(cwd)} && {command}"
        limit = timeout or self.timeout
        result = self.env.execute(command, timeout=limit)
        output = {"output": result.output, "returncode": result.returncode, "exception_info": ""}
        if result.timed_out:
            # Shown to the agent, which can react: a slow command is its own doing, not an infrastructure error.
            output["exception_info"] = f"The command timed out after {limit:g} seconds and was killed."
        check_submitted(output)
        return output

    def get_template_vars(self, **kwargs) -> dict[str, Any]:
        # As mini's own environments: the host's uname (system, release, machine...) and cwd, which its
        # templates may use; unlike them, never os.environ: API keys must not become template variables.
        own = {
            "workdir": self.env.workdir,
            "cwd": self.env.workdir,
            "timeout": self.timeout,
            "environment": self.env.name,
        }
        return {**platform.uname()._asdict(), **own, **kwargs}

    def serialize(self) -> dict:
        kind = f"{type(self.env).__module__}.{type(self.env).__name__}"
        return {"info": {"config": {"environment": dict(self.config), "environment_type": kind}}}


def check_submitted(output: dict[str, Any]) -> None:
    """Raise mini's `Submitted` as its own environments do: first line the marker, exit status 0."""
    from minisweagent.exceptions import Submitted  # imported late: importing mini needs its environment set

    lines = output["output"].lstrip().splitlines(keepends=True)
    if lines and lines[0].strip() == SUBMIT_MARKER and output["returncode"] == 0:
        submission = "".join(lines[1:])
        extra = {"exit_status": "Submitted", "submission": submission}
        raise Submitted({"role": "exit", "content": submission, "extra": extra})
