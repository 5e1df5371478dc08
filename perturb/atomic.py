"""Replacing a file so that a reader sees the old one or the whole new one, never a prefix, across a kill."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def write_atomic(path: Path, data: str | bytes, *, durable: bool = False) -> Path:
    """Write `data` (str as UTF-8) to a hidden temporary beside `path`, then rename it over `path`.

    The temporary is `.NAME.PID-THREAD.tmp`: two writers never share one, and what a killed writer leaves is
    recognisable (resumable builds remove `.*.tmp`). `durable` also syncs the file and then its folder, so
    the replacement survives a power loss, not only a kill."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        with temporary.open("wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if durable:
        folder = os.open(path.parent, os.O_RDONLY)
        try:  # the rename itself is durable only once the folder is synced
            os.fsync(folder)
        finally:
            os.close(folder)
    return path
