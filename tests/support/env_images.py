"""The `fixture_env_image` fixture: the embedded fixture's environment image, built once per session.

Built by the real builder (pip fetches pytest into a wheelhouse, the build has no network). The image is
tagged by its inputs, so a later session on the same engine finds it instead of building it again; the
wheelhouse is kept in one folder per user (`CACHE`), so finding it needs no fetch either.
Use it with `from tests.support.env_images import fixture_env_image_fixture  # noqa: F401`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from repoanchor.evals.demo.fixture_project import fixture_rows
from repoanchor.evals.images.build import build_group, groups

CACHE = Path(tempfile.gettempdir()) / f"repoanchor-test-image-cache-{os.getuid()}"
"""Shared by the test processes (the builder locks what it writes) and by later sessions."""


@pytest.fixture(scope="session", name="fixture_env_image")
def fixture_env_image_fixture(docker_engine) -> str:
    ((key, rows),) = groups(fixture_rows()).items()
    record = build_group(key, rows, None, CACHE)
    assert record.status in ("built", "cached"), record.error
    return record.image
