"""The `docker_engine` fixture: a client for a reachable engine with the base image, or a loud skip.

CI sets REPOANCHOR_REQUIRE_DOCKER=1, and then a missing engine or image fails the test instead of
skipping it, so the docker environment can never go untested there unnoticed.
Use it from a test module with `from tests.support.docker_engine import docker_engine_fixture  # noqa: F401`.
"""

from __future__ import annotations

import os

import pytest

from repoanchor.scaffolds.environments.docker_container import BASE_IMAGE, connect
from repoanchor.scaffolds.records import InfraError


def require(reason: str):
    message = f"DOCKER TESTS NOT RUN: {reason}"
    if os.environ.get("REPOANCHOR_REQUIRE_DOCKER") == "1":
        pytest.fail(f"{message} (REPOANCHOR_REQUIRE_DOCKER=1)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session", name="docker_engine")
def docker_engine_fixture():
    """A docker SDK client; skips (or, when required, fails) without an engine or the base image."""
    try:
        client = connect()
    except InfraError as error:
        require(error.message)
    if not client.images.list(name=BASE_IMAGE):
        require(f"image {BASE_IMAGE} is missing; build it with ../shared/docker/start-docker.sh")
    yield client
    client.close()
