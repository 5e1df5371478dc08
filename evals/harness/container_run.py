"""A task's tree in a fresh, network-less container of its environment image (see `evals.images`).

The tree (a host folder, `.git` included) is copied to /testbed, never bind-mounted, so nothing else of
the host reaches the container and nothing the run writes comes back. Commands run as uid 1000 with no
capabilities and only the image's variables (its venv on PATH, pip pointed at its wheelhouse). Images are
found by their labels, so a (repo, version) needs no name: `repoanchor images build` made it.
"""

from __future__ import annotations

import io
import json
import secrets
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from repoanchor.evals.harness.env_spec import EnvSpec
from repoanchor.evals.harness.eval_script import IMAGE_REPO_DIR
from repoanchor.scaffolds.environments.docker_container import LABEL, TIMEOUT_CODES, connect, owned_by_agent
from repoanchor.scaffolds.records import InfraError

IMAGE_VENV = "/opt/repoanchor/venv"
"""The environment image's venv (built by `evals.images.context`), owned by uid 1000."""
IMAGE_PYTHON = f"{IMAGE_VENV}/bin/python"
HOME = "/tmp/repoanchor-home"


def find_env_image(repo: str, version: str | None) -> str | None:
    """The newest environment image built for (repo, version), by its labels; None when there is none."""
    client = connect()
    try:
        wanted = ["repoanchor.kind=env", f"repoanchor.env.repo={repo}", f"repoanchor.env.version={version}"]
        found = client.images.list(filters={"label": wanted})
    finally:
        client.close()
    found.sort(key=lambda image: image.attrs.get("Created", ""), reverse=True)
    return next((tag for image in found for tag in image.tags), None)


def is_env_image(name: str) -> bool:
    """Whether the local image `name` was built by `repoanchor images build` (a missing one is not)."""
    import docker

    client = connect()
    try:
        return (client.images.get(name).labels or {}).get("repoanchor.kind") == "env"
    except docker.errors.ImageNotFound:
        return False
    finally:
        client.close()


PROVIDERS = ("auto", "image", "local")


def choose_provider(row: dict[str, Any], requested: str) -> tuple[str, str | None]:
    """(`image` or `local`, why `auto` fell back to `local` or None). `auto` takes the environment image of
    the row's (repo, version) where the engine has one; otherwise the local provider, and says so."""
    if requested not in PROVIDERS:
        raise ValueError(f"unknown provider {requested!r}; expected one of {', '.join(PROVIDERS)}")
    if requested != "auto":
        return requested, None
    try:
        found = find_env_image(row["repo"], None if row.get("version") is None else str(row["version"]))
    except InfraError as error:
        return "local", f"no Docker engine ({error.message.split(';')[0]}): graded on the host (isolated)"
    if found is None:
        return "local", f"no environment image for {row['repo']} {row.get('version')}: graded on the host (isolated)"
    return "image", None


def env_image_spec(row: dict[str, Any], image: str | None = None) -> EnvSpec:
    """The EnvSpec of `row` on its environment image (given, or found by labels), read from the image's labels."""
    name = image or find_env_image(row["repo"], None if row.get("version") is None else str(row["version"]))
    if name is None:
        raise InfraError(
            "image_missing",
            f"{row['instance_id']}: no environment image for {row['repo']} {row.get('version')}; "
            "build it with `repoanchor images build DATASET`",
        )
    client = connect()
    try:
        labels = client.images.get(name).labels or {}
    finally:
        client.close()
    return EnvSpec(
        provider="image", instance_id=row["instance_id"], route="env-image", image=name, python=IMAGE_PYTHON,
        python_version=labels.get("repoanchor.env.python"),
        pre_install=json.loads(labels.get("repoanchor.env.pre_install") or "[]"),
        install=labels.get("repoanchor.env.install") or None,
        skipped=json.loads(labels.get("repoanchor.env.skipped") or "[]"),
    )  # fmt: skip


def _tree_archive(tree: Path, scratch: Path, files: dict[str, bytes]) -> Path:
    """`tree` at /testbed and `files` (name -> content) in HOME, all owned by uid 1000."""
    archive = scratch / "tree.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(tree, arcname=IMAGE_REPO_DIR.strip("/"), filter=owned_by_agent)
        for folder in (HOME, f"{HOME}/tmp"):
            info = owned_by_agent(tarfile.TarInfo(folder.strip("/")))
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for name, content in sorted(files.items()):
            info = owned_by_agent(tarfile.TarInfo(f"{HOME.strip('/')}/{name}"))
            info.size, info.mode = len(content), 0o644
            tar.addfile(info, io.BytesIO(content))
    return archive


def run_in_tree(
    tree: Path,
    script: str,
    env: EnvSpec,
    timeout: float,
    *,
    files: dict[str, bytes] | None = None,
    variables: dict[str, str] | None = None,
) -> tuple[bool, str]:
    """Run bash `script` in a copy of `tree` at /testbed in a fresh container of `env.image`; (timed out, output).

    Host paths of `tree` in `script` are rewritten to /testbed. `files` (name -> content) are put in the
    container's HOME (`$HOME/name`) beside the tree, never into it; `variables` join the container's few."""
    import docker

    tree = Path(tree).resolve()
    script = script.replace(str(tree), IMAGE_REPO_DIR)
    confined = {"user": "1000:1000", "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"], "pids_limit": 1024}
    try:
        with one_off_container(env.image, **confined) as container:
            with tempfile.TemporaryDirectory(prefix="repoanchor-tree-") as scratch:
                with _tree_archive(tree, Path(scratch), files or {}).open("rb") as stream:
                    container.put_archive("/", stream)
            argv = ["timeout", "-k", "5", str(max(timeout, 1)), "bash", "-c", script]
            own = {"HOME": HOME, "TMPDIR": f"{HOME}/tmp", "PYTHONDONTWRITEBYTECODE": "1"}
            code, out = container.exec_run(
                ["bash", "-c", 'exec "$@" 2>&1', "merge", *argv], workdir=IMAGE_REPO_DIR, user="1000:1000",
                environment={**(variables or {}), **own},
            )  # fmt: skip
    except docker.errors.DockerException as error:
        raise InfraError("environment_exec", f"could not run in a container of {env.image}: {error}") from error
    return code in TIMEOUT_CODES, (out or b"").decode("utf-8", "replace")


@contextmanager
def one_off_container(image: str, **options: Any) -> Iterator[Any]:
    """A fresh container of the local image `image` (idle until exec'd), network-less and labelled ours, removed
    on leaving whatever happened; InfraError `image_missing` when the engine does not have the image (nothing is
    pulled). `options` go to `containers.run` (user, capabilities, limits)."""
    import docker

    client = connect()
    container = None
    try:
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound as error:
            raise InfraError("image_missing", f"{image} is not in the engine; pull or build it first") from error
        container = client.containers.run(
            image, ["sleep", "infinity"], name=f"repoanchor-run-{secrets.token_hex(6)}", detach=True, init=True,
            network_mode="none", labels=LABEL, **options,
        )  # fmt: skip
        yield container
    finally:
        if container is not None:
            container.remove(force=True)
        client.close()
