"""Image names: the environment images built here, and SWE-bench's published per-instance images.

Environment images are tagged by a digest of everything that went into them, so a changed input gives a new
tag and an unchanged one finds the image already built. They also carry labels (`LABELS`), by which the
harness finds the image for a (repo, version) without knowing its tag.
"""

from __future__ import annotations

import re

ENV_REPOSITORY = "repoanchor/sweb.env.{repo}.{version}"
PUBLISHED_TEMPLATE = "swebench/sweb.eval.x86_64.{instance_id}:latest"
"""SWE-bench's own naming of its per-instance evaluation images (as pushed to Docker Hub)."""
KIND_LABEL = "repoanchor.kind"
REPO_LABEL = "repoanchor.env.repo"
VERSION_LABEL = "repoanchor.env.version"


def _slug(text: str) -> str:
    """Docker repository names allow lowercase letters, digits and separators only."""
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip(".-_") or "none"


def env_image_name(repo: str, version: str | None, digest: str) -> str:
    """`repoanchor/sweb.env.pallets__flask.2.3:1a2b3c4d5e6f`."""
    name = ENV_REPOSITORY.format(repo=_slug(repo.replace("/", "__")), version=_slug(str(version or "none")))
    return f"{name}:{digest[:12]}"


def published_image_name(instance_id: str, template: str = PUBLISHED_TEMPLATE) -> str:
    """SWE-bench's image for an instance: `__` becomes `_1776_` and the name is lowercased, as SWE-bench
    does, since Docker Hub repository names cannot hold a double underscore."""
    return template.format(instance_id=instance_id.replace("__", "_1776_").lower())
