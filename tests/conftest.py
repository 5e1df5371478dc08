"""Shared pytest options: opt-in live API tests."""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    parser.addoption("--run-live", action="store_true", help="run tests that call a real LLM API (costs money)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-live"):
        return
    skip = pytest.mark.skip(reason="needs --run-live and a real API key")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


REPO_ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
CACHE = REPO_ROOT / ".cache"


def real_project(name: str, version: str):
    """The extracted sdist of a real PyPI project, downloaded once into .cache/."""
    import os

    from repoanchor.evals.projects import DownloadError, fetch_sdist

    try:
        return fetch_sdist(name, version, CACHE)
    except DownloadError:
        if os.environ.get("REPOANCHOR_OFFLINE"):
            pytest.skip(f"REPOANCHOR_OFFLINE is set and {name}=={version} is not cached")
        raise


@pytest.fixture(scope="session")
def toolz_tree():
    return real_project("toolz", "1.0.0")
