"""How untrusted code runs on the host: a short allow-list of variables, a private HOME, and no network.

Candidate patches, agents' answers and variants all execute project code (a `conftest.py` runs at
collection). On the host that code gets only `PASSED_VARIABLES` of the runner's environment (never a key,
token, proxy or registry setting) and its own HOME and TMPDIR. It runs in a network namespace of its own
(`unshare --map-current-user --net`, loopback up, nothing else): like a `--network none` container, a test
server on 127.0.0.1 works and nothing beyond the namespace is reachable, the runner's loopback services
included. Where namespaces are unavailable the run goes on with the host's network, and says so: a warning
is printed once and `NETWORK_NOTE` begins every log of such a run.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

PASSED_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ")
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)  # as scaffolds' models
OFFLINE = ("unshare", "--map-current-user", "--net", "--")
LOOPBACK_UP = "ip link set lo up"


def untrusted_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The variables untrusted code gets: the allow-list, a private HOME/TMPDIR under `home`, then `extra`."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ}
    env.update(HOME=str(home), TMPDIR=str(home / "tmp"), PYTHONDONTWRITEBYTECODE="1")
    env.update(extra or {})
    leaked = sorted(name for name in env if SECRET_NAME.search(name))
    if leaked:
        raise ValueError(f"refusing to pass secret-looking variables to untrusted code: {leaked}")
    return env


@functools.cache
def offline_unavailable() -> str | None:
    """Why a private network namespace cannot be made here (None when it can); probed once per process."""
    if not sys.platform.startswith("linux") or not (shutil.which("unshare") and shutil.which("ip")):
        return "needs Linux with unshare and ip (util-linux, iproute2)"
    try:
        probe = subprocess.run([*OFFLINE, "sh", "-c", LOOPBACK_UP], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unshare failed: {error}"
    return None if probe.returncode == 0 else f"unshare failed: {probe.stderr.strip()[-300:]}"


NETWORK_NOTE = "repoanchor: the host's network was reachable from this run"
NETWORK_ERRORS = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Name or service not known|No route to host"
    r"|No address associated with hostname|nodename nor servname provided|getaddrinfo failed",
    re.IGNORECASE,
)
"""What a socket says where there is no network (connection refused is left out: loopback is up, so a refusal is
a local server's own failure)."""


def offline_hint(log: str) -> str:
    """ "; ..." naming the network errors in the log of a run made without a network (its tests that need one fail
    for that alone: a SWE-bench image's own runs have it), else ""."""
    errors = [] if NETWORK_NOTE in log else NETWORK_ERRORS.findall(log)
    if not errors:
        return ""
    return f"; its log shows {len(errors)} network error(s) (first: {errors[0]!r}): the tests ran without a network"


def offline_command(script: str) -> tuple[list[str], str]:
    """(argv running bash `script` without network where possible, a note for the run's log: '' or why not)."""
    reason = offline_unavailable()
    if reason is None:
        return [*OFFLINE, "bash", "-c", f"{LOOPBACK_UP} && {{\n{script}\n}}"], ""
    _warn_once(reason)
    return ["bash", "-c", script], f"{NETWORK_NOTE} ({reason})\n"


@functools.cache
def _warn_once(reason: str) -> None:
    print(f"warning: untrusted code runs with the host's network: {reason}", file=sys.stderr)
