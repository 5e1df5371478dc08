"""The `docker` environment: the task repository copied into a network-less container, one per run.

The repository goes in by copy (a tar of a fresh checkout at the base commit, history up to that commit
and nothing later), never by bind mount: nothing else from the host, ground truth above all, may reach an
agent. Commands run as uid 1000 with a scrubbed environment; `close` force-removes the container.
The docker SDK is imported lazily so that the `local` environment never needs it.
"""

from __future__ import annotations

import io
import os
import secrets
import shutil
import tarfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from repoanchor.scaffolds.environments.local import QUIET_TOOLS, checkout_at, git, working_tree_patch
from repoanchor.scaffolds.environments.scratch import scratch_folder
from repoanchor.scaffolds.models.model import SECRET_NAME
from repoanchor.scaffolds.records import CommandResult, InfraError

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

BASE_IMAGE = "repoanchor/base:bookworm"
LABEL = {"repoanchor": "run"}
"""Every container carries it, so leftovers from a crashed run can be found and removed."""
USER = "1000:1000"
HOME = "/work/home"
# `docker import`ed images carry no environment of their own, so PATH and LANG are set here, not taken from
# the host (a host LANG the minimal image has no locale for would make every command print warnings).
BASE_VARIABLES = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "HOME": HOME,
    "TMPDIR": f"{HOME}/tmp",
    **QUIET_TOOLS,
}
TIMEOUT_CODES = (124, 137)  # coreutils `timeout`: 124 after SIGTERM, 137 when the -k SIGKILL was needed
ENGINE_HINT = "start one with ../shared/docker/start-docker.sh, or point DOCKER_HOST at a running engine"


def container_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The variables a command in the container gets: a fixed set, never anything secret-looking."""
    env = {**BASE_VARIABLES, **(extra or {})}
    leaked = [k for k in env if SECRET_NAME.search(k)]
    if leaked:
        raise ValueError(f"refusing to pass secret-looking variables to agent commands: {leaked}")
    return env


def connect() -> DockerClient:
    import docker

    try:
        client = docker.from_env()
        client.ping()  # from_env may not touch the socket; fail here, not at the first command
    except docker.errors.DockerException as error:
        host = os.environ.get("DOCKER_HOST", "the default socket")
        raise InfraError("engine_unavailable", f"no Docker engine at {host} ({error}); {ENGINE_HINT}") from error
    return client


def owned_by_agent(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 1000
    info.uname = info.gname = "agent"
    return info


def write_archive(clone: Path, scratch: Path, workdir: str = "/work/repo") -> Path:
    """work/, work/home (tmp/, .gitconfig) and the repository (with .git) at `workdir`, all owned by uid 1000,
    ready to extract at /."""
    archive = scratch / "work.tar"
    with tarfile.open(archive, "w") as tar:
        for folder in ("work", "work/home", "work/home/tmp"):
            info = owned_by_agent(tarfile.TarInfo(folder))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, int(time.time())
            tar.addfile(info)
        # uid 1000 has no passwd entry, so without an identity an agent's `git commit` would fail.
        identity = b"[user]\n\tname = agent\n\temail = agent@repoanchor.invalid\n"
        info = owned_by_agent(tarfile.TarInfo("work/home/.gitconfig"))
        info.size, info.mode, info.mtime = len(identity), 0o644, int(time.time())
        tar.addfile(info, io.BytesIO(identity))
        tar.add(clone, arcname=workdir.strip("/"), filter=owned_by_agent)
    return archive


class DockerContainer:
    """A container of `image` holding a copy of `repo` at `ref` in `workdir` (/work/repo; /testbed in an
    environment image), removed on close. `setup` (the project's install) runs once after the copy, as
    the agent's user, before any agent command; its failure is an infrastructure error."""

    name = "docker"

    def __init__(
        self,
        repo: str | Path,
        ref: str = "HEAD",
        *,
        image: str = BASE_IMAGE,
        memory: str = "2g",
        pids: int = 512,
        env: dict[str, str] | None = None,
        mounts: list[tuple[str | Path, str, str]] | None = None,
        workdir: str = "/work/repo",
        setup: str | None = None,
    ) -> None:
        self.repo, self.workdir = Path(repo).resolve(), workdir
        if not (self.repo / ".git").exists():
            raise InfraError(
                "environment_setup", f"{self.repo} is not a git repository (need a commit to diff against)"
            )
        self.base = git(self.repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()
        self.container: Container | None = None
        self.client = connect()  # before any container exists, so a failure here leaves nothing behind
        # An image's own variables (an environment image's venv on PATH, pip's wheelhouse) come first.
        self.env = container_environment({**self._image_variables(image), **(env or {})})
        try:
            self.container = self._start(image, memory, pids, mounts or [])
            self._copy_repository()
            if setup:
                self._setup(setup)
        except BaseException:
            self.close()  # a half-made container must not outlive the failure
            raise

    def _image_variables(self, image: str) -> dict[str, str]:
        import docker

        try:
            declared = self.client.images.get(image).attrs.get("Config", {}).get("Env") or []
        except docker.errors.ImageNotFound:
            return {}  # _start says so, with the hint
        found = dict(item.split("=", 1) for item in declared if "=" in item)
        return {k: v for k, v in found.items() if k not in ("HOME", "TMPDIR") and not SECRET_NAME.search(k)}

    def _setup(self, script: str) -> None:
        result = self.execute(f"{{\n{script}\n}}", timeout=1800)
        if result.returncode != 0:
            raise InfraError("environment_setup", f"setup in {self.workdir} failed:\n{result.output[-3000:]}")
        # Nothing the setup did may enter the agent's patch. What it generates (an egg-info an old .gitignore
        # misses) is excluded locally; tracked files it edits (a spec's pre_install) are committed, and that
        # commit becomes the diff base, as grading re-runs the same steps before applying the patch.
        status = self.execute("git status --porcelain --untracked-files=normal", timeout=120).output.splitlines()
        generated = "".join(f"/{line[3:]}\n" for line in status if line.startswith("??"))
        if generated:
            self.execute(f"cat >> .git/info/exclude <<'REPOANCHOR_EOF'\n{generated}REPOANCHOR_EOF", timeout=60)
        if any(not line.startswith("??") for line in status):
            commit = self.execute("git commit -q -a -m 'environment setup' && git rev-parse HEAD", timeout=120)
            if commit.returncode != 0:
                raise InfraError("environment_setup", f"could not commit the setup's edits: {commit.output[-2000:]}")
            self.base = commit.output.split()[-1]

    def _start(self, image: str, memory: str, pids: int, mounts: list[tuple[str | Path, str, str]]) -> Container:
        import docker

        try:
            self.client.images.get(image)
        except docker.errors.ImageNotFound as error:
            raise InfraError(
                "image_missing", f"image {image} is not in the engine; build the base with start-docker.sh"
            ) from error
        try:
            return self.client.containers.run(
                image,
                ["sleep", "infinity"],
                name=f"repoanchor-{secrets.token_hex(6)}",
                labels=LABEL,
                detach=True,
                init=True,  # reaps the orphans that killed commands leave, which would otherwise eat the pid limit
                network_mode="none",
                user=USER,
                mem_limit=memory,
                pids_limit=pids,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                mounts=[bind(*mount) for mount in mounts],
            )
        except docker.errors.DockerException as error:
            raise InfraError("environment_setup", f"could not start a container of {image}: {error}") from error

    def _copy_repository(self) -> None:
        import docker

        scratch = scratch_folder("copy")
        try:
            archive = write_archive(checkout_at(self.repo, self.base, scratch), scratch, self.workdir)
            with archive.open("rb") as stream:  # streamed, so a large repository is not held in memory
                self.container.put_archive("/", stream)
        except docker.errors.DockerException as error:
            raise InfraError("environment_setup", f"could not copy {self.repo} into the container: {error}") from error
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def execute(self, command: str, timeout: float | None = None) -> CommandResult:
        import docker

        argv = ["bash", "-c", command]
        if timeout is not None:
            # Enforced inside the container: the whole process group is signalled, the container stays usable.
            argv = ["timeout", "-k", "5", str(max(timeout, 0.01)), *argv]  # `timeout 0` would mean no limit
        # Docker reads stdout and stderr from separate pipes, so their order would be lost; one pipe keeps it.
        argv = ["bash", "-c", 'exec "$@" 2>&1', "merge", *argv]
        started = time.monotonic()
        try:
            code, out = self.container.exec_run(
                argv, stderr=False, workdir=self.workdir, user=USER, environment=self.env
            )
        except docker.errors.DockerException as error:
            raise InfraError("environment_exec", f"command could not run in the container: {error}") from error
        # An out-of-memory kill also exits 137; only a command that used its whole time counts as timed out.
        timed_out = timeout is not None and code in TIMEOUT_CODES and time.monotonic() - started >= timeout
        return CommandResult((out or b"").decode("utf-8", "replace"), code, timed_out=timed_out)

    def patch(self) -> str:
        return working_tree_patch(self)

    def close(self) -> None:
        import docker

        if self.container is not None:
            try:
                self.container.remove(force=True)
            except docker.errors.NotFound:
                pass
            self.container = None
        self.client.close()

    def __enter__(self) -> DockerContainer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def bind(host_path: str | Path, container_path: str, mode: str = "ro"):
    """A bind mount that fails when the host path is missing (`volumes=` would silently create it)."""
    from docker.types import Mount

    if mode not in ("ro", "rw"):
        raise ValueError(f"mount mode must be 'ro' or 'rw', not {mode!r}")
    return Mount(container_path, str(Path(host_path).resolve()), type="bind", read_only=mode == "ro")


def leftover_containers(client: DockerClient) -> list[Container]:
    """Containers of earlier runs (crashed or killed) that are still in the engine."""
    # sparse: no per-container inspect, which races with containers other runs are removing right now.
    return client.containers.list(all=True, filters={"label": "repoanchor=run"}, sparse=True)
