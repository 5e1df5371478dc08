"""Where the workplace's shared material (real trajectories, SWE-bench rows) lives, when it is present.

Looked up in order: $REPOANCHOR_SHARED, a `shared/` folder beside the repository, /work/shared. Tests that
need it skip with the paths they tried when none exists (e.g. a clone on another machine).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def candidates() -> list[Path]:
    found = [Path(os.environ["REPOANCHOR_SHARED"])] if os.environ.get("REPOANCHOR_SHARED") else []
    return [*found, REPO_ROOT.parent / "shared", Path("/work/shared")]


def shared_dir() -> Path | None:
    return next((path for path in candidates() if (path / "data").is_dir()), None)


def shared_path(*parts: str) -> Path:
    """The path under the shared folder (or under the first candidate, for the skip message)."""
    return (shared_dir() or candidates()[0]) / Path(*parts)
