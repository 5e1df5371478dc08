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


@pytest.fixture(scope="session")
def toolz_tree():
    from tests.support.pypi import fetch_sdist

    return fetch_sdist("toolz", "1.0.0")
