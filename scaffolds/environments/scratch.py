"""Per-run scratch folders that a killed process cannot leak for long.

A run makes folders in the temporary directory (its checkout, the scaffold's working files) and removes them when
it ends; a worker killed outright (the OOM killer, a crash test's SIGKILL) cannot. Each folder is named after the
process that made it, `repoanchor-<kind>-<pid>-<random>`, so the next run on the machine removes the folders of
processes that are gone (`sweep_orphans`); a live process's folders are never touched, whoever owns them.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

KINDS = ("run", "mini", "opencode", "copy")
_NAME = re.compile(rf"^repoanchor-(?:{'|'.join(KINDS)})-(\d+)-[A-Za-z0-9_]+$")


def scratch_prefix(kind: str) -> str:
    """The `prefix` for tempfile of a `kind` folder made by this process."""
    if kind not in KINDS:
        raise ValueError(f"unknown scratch kind {kind!r}; known: {', '.join(KINDS)}")
    return f"repoanchor-{kind}-{os.getpid()}-"


def scratch_folder(kind: str) -> Path:
    """A new, empty folder of this process (the caller removes it when done)."""
    return Path(tempfile.mkdtemp(prefix=scratch_prefix(kind)))


def sweep_orphans(root: Path | None = None) -> list[Path]:
    """Remove the scratch folders under `root` (the temporary directory) whose process is gone; those removed."""
    removed = []
    for folder in Path(root or tempfile.gettempdir()).glob("repoanchor-*-*-*"):
        match = _NAME.match(folder.name)
        if match and not _alive(int(match.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True
