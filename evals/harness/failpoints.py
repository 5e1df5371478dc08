"""Named crash points, so crash-safety is tested at exact moments instead of by wall-clock luck.

A long-running writer (the suite build, the run matrix, grading) calls `failpoint("name", key)`
between the steps whose order makes it crash-safe. Normally nothing happens. When the environment
variable REPOANCHOR_FAILPOINT is `name` or `name@key`, the whole process group (the command and
its worker processes) is SIGKILLed there, as a closed terminal or `kill -9 -PGID` would: no cleanup,
no `finally`, no atexit, no pool noticing a dead worker. Tests set it on a command started in its own
session, then resume in a fresh process and compare with an unbroken run.

`name@key` fires only for that key (e.g. one instance id); a trailing `#N` fires on the Nth
matching call in the process (1-based), so a sweep can land between any two steps of any job.
With REPOANCHOR_FAILPOINT_KILL=process only the calling process dies (a driver killed alone, its
workers left to notice), instead of its group.
"""

from __future__ import annotations

import os
import signal

ENV = "REPOANCHOR_FAILPOINT"
SCOPE_ENV = "REPOANCHOR_FAILPOINT_KILL"
_seen: dict[str, int] = {}


def failpoint(name: str, key: str = "") -> None:
    """Kill this process group here (SIGKILL) if REPOANCHOR_FAILPOINT selects this point."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    point, _, nth = spec.partition("#")
    wanted, _, wanted_key = point.partition("@")
    if wanted != name or (wanted_key and wanted_key != key):
        return
    _seen[point] = _seen.get(point, 0) + 1
    if _seen[point] == int(nth or 1):
        if os.environ.get(SCOPE_ENV) == "process":
            os.kill(os.getpid(), signal.SIGKILL)
        os.killpg(os.getpgid(0), signal.SIGKILL)
