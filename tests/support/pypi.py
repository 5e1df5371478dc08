"""Real projects for tests, fetched once from PyPI as sdists and cached under `<repo root>/.cache/`.

Delegates to `repoanchor.evals.harness.projects`, which owns the cache layout (`.cache/sdists/<archive>`,
`.cache/projects/NAME-VERSION/`, atomic extraction) shared with the demo and benchmarks; two
layouts in one cache would each misread the other's trees. This wrapper adds the test policy:
the cache is the repository's whatever the working directory, and a failed download is an
error, never a silent skip, so a broken fetch cannot pass for a green suite.
`REPOANCHOR_OFFLINE=1` turns uncached fetches into explicit skips, without touching the network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repoanchor.evals.harness.projects import DownloadError
from repoanchor.evals.harness.projects import fetch_sdist as _fetch

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"


class SdistUnavailable(RuntimeError):
    """pip could not download the sdist (no network, no such release, no sdist published)."""


def fetch_sdist(name: str, version: str) -> Path:
    """The extracted project root of NAME==VERSION, downloading and extracting it on first use."""
    cached = (CACHE / "projects" / f"{name}-{version}").is_dir()
    if not cached and os.environ.get("REPOANCHOR_OFFLINE") == "1":
        pytest.skip(f"REPOANCHOR_OFFLINE=1 and {name}=={version} is not cached in {CACHE}")
    try:
        return _fetch(name, version, CACHE)
    except DownloadError as exc:
        raise SdistUnavailable(f"{exc}\nSet REPOANCHOR_OFFLINE=1 to skip the tests that need it.") from exc
