"""Running `opencode` and stopping it: on the host (a subprocess) or inside the run's container (a docker exec).

Both runners have the same small interface the adapter drives: `lines()` yields stdout lines (JSON events) as
they arrive while stderr goes to a file, `kill()` stops OpenCode and every command it started, `wait()`
returns the exit code, and `export(session_id)` runs `opencode export` in the same environment.

In a container OpenCode has no network (`--network none`): it reaches the host's model relay through the
relay's unix socket, mounted into the container, and a tiny TCP-to-unix-socket forwarder (`FORWARDER`) on
127.0.0.1 inside it. The binaries come in read-only through the mounts of `mounts()`.
"""

from __future__ import annotations

import atexit
import io
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from repoanchor.scaffolds.opencode.setup import find_opencode, find_rg, seed_files
from repoanchor.scaffolds.records import InfraError

# Stops a process and all its descendants, found through /proc: OpenCode's bash tool may start commands in
# sessions of their own, which a process-group kill would miss. Stop everything first (no new forks), then kill.
KILL_TREE = r"""
import os, signal, sys
def tree():
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    return children
found = set()
while True:
    children, todo, new = tree(), [int(sys.argv[1])], []
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        if pid not in found:
            found.add(pid)
            new.append(pid)
    if not new:
        break
    for pid in new:
        try:
            os.kill(pid, signal.SIGSTOP)
        except OSError:
            pass
for pid in found:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""

# 127.0.0.1:<port> -> the relay's unix socket, one thread pair per connection; touches <ready> once listening.
FORWARDER = r"""
import socket, sys, threading
port, path, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def pipe(a, b):
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
def serve(client):
    upstream = socket.socket(socket.AF_UNIX)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        return
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client)
listener = socket.create_server(("127.0.0.1", port))
open(ready, "w").close()
while True:
    threading.Thread(target=serve, args=(listener.accept()[0],), daemon=True).start()
"""

IN_CONTAINER = "/opt/repoanchor"
RELAY_DIR = f"{IN_CONTAINER}/relay"
SOCKET_NAME = "relay.sock"
FORWARD_PORT = 41017
HOME = "/work/opencode"  # OpenCode's home in the container; /work belongs to the agent's uid
EXPORT_TIMEOUT = 60.0


def _write_prompt(stream, prompt: str) -> None:
    try:
        stream.write(prompt.encode())
        stream.close()
    except OSError:  # OpenCode died before reading it; its exit code tells the rest
        pass


class LocalProcess:
    """`opencode run` as a host subprocess in a session of its own."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str, prompt: str, stderr: Path) -> None:
        self.argv, self.env, self.cwd = argv, env, cwd
        with stderr.open("ab") as errors:
            self.process = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                start_new_session=True,
            )  # fmt: skip
        threading.Thread(target=_write_prompt, args=(self.process.stdin, prompt), daemon=True).start()

    def lines(self) -> Iterator[bytes]:
        yield from self.process.stdout

    def kill(self) -> None:
        if self.process.poll() is None:
            subprocess.run([sys.executable, "-c", KILL_TREE, str(self.process.pid)], check=False)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass

    def wait(self) -> int:
        return self.process.wait()

    def export(self, session_id: str) -> tuple[int, bytes, bytes]:
        done = subprocess.run(
            [self.argv[0], "export", session_id], cwd=self.cwd, env=self.env, capture_output=True,
            timeout=EXPORT_TIMEOUT,
        )  # fmt: skip
        return done.returncode, done.stdout, done.stderr


def mounts() -> list[tuple[str, str, str]]:
    """What a docker environment needs for OpenCode: pass to `open_environment(..., mounts=OpenCode.mounts())`.

    The binaries read-only, and a fresh host folder where the run's relay puts its unix socket."""
    relay_dir = Path(tempfile.mkdtemp(prefix="repoanchor-relay-"))
    relay_dir.chmod(0o755)  # the container's uid 1000 must reach the socket inside
    # Kept while this process lives: the same container may host several runs (the two anchor stages).
    atexit.register(shutil.rmtree, relay_dir, True)
    return [
        (str(find_opencode()), f"{IN_CONTAINER}/bin/opencode", "ro"),
        (str(find_rg()), f"{IN_CONTAINER}/bin/rg", "ro"),
        (str(relay_dir), RELAY_DIR, "ro"),
    ]


@contextmanager
def engine(what: str) -> Iterator[None]:
    """Docker SDK failures (the engine went away, the container is gone) as infrastructure errors."""
    import docker

    try:
        yield
    except docker.errors.DockerException as error:
        raise InfraError("environment_exec", f"{what}: {error}") from error


def relay_socket(container) -> Path:
    """The host path of the relay socket, from the container's mount of RELAY_DIR."""
    with engine("cannot inspect the container"):
        container.reload()
    for mount in container.attrs.get("Mounts") or []:
        if mount.get("Destination") == RELAY_DIR:
            return Path(mount["Source"]) / SOCKET_NAME
    raise InfraError(
        "environment_setup",
        "the docker environment lacks OpenCode's mounts: open it with mounts=OpenCode.mounts() "
        "(the binaries and the model relay's socket folder)",
    )


def _tar(files: dict[str, str], folders: list[str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode, info.uid, info.gid, info.mtime = tarfile.DIRTYPE, 0o755, 1000, 1000, int(time.time())
            tar.addfile(info)
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid, info.mtime = len(data), 0o644, 1000, 1000, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class ContainerProcess:
    """`opencode run` inside the docker environment's container, through a streamed docker exec."""

    def __init__(self, env, args: list[str], variables: dict[str, str], prompt: str, stderr: Path) -> None:
        self.env, self.variables, self.stderr = env, variables, stderr
        self.container, self.api = env.container, env.container.client.api
        base = HOME.lstrip("/")
        folders = [base, f"{base}/tmp", f"{base}/.repoanchor", f"{base}/.config", f"{base}/.config/opencode"]
        folders.append(f"{base}/.config/opencode/node_modules")
        files = {f"{base}/{name}": text for name, text in seed_files().items()}
        files |= {f"{base}/.repoanchor/prompt.txt": prompt, f"{base}/.repoanchor/forward.py": FORWARDER}
        state = f"{HOME}/.repoanchor"
        script = (
            f"echo $$ > {state}/pid; "
            f"python3 {state}/forward.py {FORWARD_PORT} {RELAY_DIR}/{SOCKET_NAME} {state}/ready & "
            f"for _ in $(seq 100); do [ -e {state}/ready ] && break; sleep 0.05; done; "
            f"[ -e {state}/ready ] || {{ echo 'repoanchor: no model forwarder (python3?)' >&2; exit 97; }}; "
            f"{shlex.join([f'{IN_CONTAINER}/bin/opencode', *args])} < {state}/prompt.txt; "
            "status=$?; kill $! 2>/dev/null; exit $status"
        )
        with engine("cannot start OpenCode in the container"):
            self.container.put_archive("/", _tar(files, folders))
            self.exec_id = self._exec(["setsid", "--wait", "bash", "-c", script])
            self.stream = self.api.exec_start(self.exec_id, stream=True, demux=True)

    def _exec(self, argv: list[str]) -> str:
        return self.api.exec_create(
            self.container.id, argv, stdout=True, stderr=True, user="1000:1000", workdir=self.env.workdir,
            environment=self.variables,
        )["Id"]  # fmt: skip

    def lines(self) -> Iterator[bytes]:
        pending = b""
        with self.stderr.open("ab") as errors:
            for out, err in self.stream:
                if err:
                    errors.write(err)
                    errors.flush()
                pending += out or b""
                *complete, pending = pending.split(b"\n")
                yield from (line + b"\n" for line in complete)
        if pending:
            yield pending

    def kill(self) -> None:
        with engine("cannot stop OpenCode in the container"):
            if not self.api.exec_inspect(self.exec_id)["Running"]:
                return
            # The script's shell leads its own session (setsid); kill it and everything below it.
            kill = f"python3 -c {shlex.quote(KILL_TREE)} $(cat {HOME}/.repoanchor/pid)"
            self.container.exec_run(["bash", "-c", kill], user="1000:1000")

    def wait(self) -> int:
        with engine("cannot inspect OpenCode in the container"):
            for _ in range(100):
                info = self.api.exec_inspect(self.exec_id)
                if not info["Running"]:
                    return info["ExitCode"] if info["ExitCode"] is not None else -1
                time.sleep(0.1)
        return -1

    def export(self, session_id: str) -> tuple[int, bytes, bytes]:
        with engine("cannot export the OpenCode session"):
            exec_id = self._exec(["timeout", str(EXPORT_TIMEOUT), f"{IN_CONTAINER}/bin/opencode", "export", session_id])
            out, err = self.api.exec_start(exec_id, demux=True)
            return self.api.exec_inspect(exec_id)["ExitCode"], out or b"", err or b""
