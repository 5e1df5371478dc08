"""Environments by name, and the config that picks one: importing this never imports the docker SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from repoanchor.scaffolds.environments.docker_container import BASE_IMAGE, DockerContainer
from repoanchor.scaffolds.environments.local import Environment, LocalCheckout

ENVIRONMENTS = {"local": LocalCheckout, "docker": DockerContainer}


class EnvironmentConfig(BaseModel):
    """Where a run's commands execute; the image and limits only matter for `docker`."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    kind: Literal["local", "docker", "image", "auto"] = "local"
    """`local`: a standalone checkout on the host (trusted policies only); `docker`: a container of `image`
    holding the repository; `image`: a container of the task's environment image (`repoanchor images build`),
    the repository at /testbed with the project installed; `auto`: `image` for a model, `local` for a trusted
    policy. `image` and `auto` are resolved per task by the run (evals.runs)."""
    image: str = BASE_IMAGE
    """A local image with bash, git and coreutils; nothing is pulled. For `image`, an environment image to use
    instead of the one found for the task's repo and version."""
    workdir: str = "/work/repo"
    """Where the repository is in the container (/testbed in an environment image)."""
    setup: str | None = None
    """A script run once in the repository after the copy, as the agent's user (an environment image's install)."""
    memory: str = "2g"
    """The container's memory limit, in Docker's notation (512m, 2g)."""
    pids: int = 512
    """The most processes the container may hold at once."""


def open_environment(
    config: EnvironmentConfig,
    repo: str | Path,
    ref: str = "HEAD",
    *,
    env: dict[str, str] | None = None,
    mounts: list[tuple[str | Path, str, str]] | None = None,
) -> Environment:
    """A fresh environment for one run; the caller closes it (or uses it as a context manager)."""
    if config.kind == "local":
        # Host paths are already visible to a local checkout, so mounts have nothing to do there.
        return LocalCheckout(repo, ref, env=env)
    if config.kind in ("image", "auto"):
        raise ValueError(f"environment kind {config.kind!r} names no image yet: resolve it for the task (evals.runs)")
    return DockerContainer(
        repo, ref, image=config.image, memory=config.memory, pids=config.pids, env=env, mounts=mounts,
        workdir=config.workdir, setup=config.setup,
    )  # fmt: skip
