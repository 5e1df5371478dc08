"""`EnvSpec`: where and how an instance's tests run, as recorded with every test run (see `instance_env`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class EnvSpec(BaseModel):
    provider: Literal["local", "image"]
    instance_id: str
    route: Literal["current", "spec", "image", "env-image"]
    """`image`: a SWE-bench instance image, the repository already at /testbed; `env-image`: an environment
    image built here, the task's tree copied to /testbed for each run."""
    python: str | None = None
    python_version: str | None = None
    """"X.Y" of `python` where it cannot be asked on the host (an interpreter inside an image)."""
    venv: str | None = None
    image: str | None = None
    pre_install: list[str] = []
    """Tree-editing setup steps, re-run after each reset of the checkout (best effort, as one script)."""
    install: str | None = None
    """The project's own install, run after the patches and before the tests of every run."""
    dependencies_as_of: str | None = None
    """The release date the venv's dependencies resolve under (`dependencies.release_date`), or None; where its pip
    could not apply it, or a build failed under it, `skipped` says so."""
    skipped: list[str] = []
    """Setup steps not run here (conda-only, system packages), so a failure can be traced to them."""
