"""OpenCode (pinned 1.18.33) as a scaffold: `opencode run --format json`, watched and stopped from here.

OpenCode runs as its own binary with an isolated home and no network of its own: its one provider is the
model relay (relay.py) on 127.0.0.1, which holds the real key, so neither OpenCode nor the agent's commands
(which inherit OpenCode's environment) ever see it. Locally OpenCode runs on the host in the checkout; in
`docker` it runs inside the run's container, so its tools execute there (see process.py).

The adapter enforces the limits OpenCode lacks, reading the JSON events as they stream:
- steps: model calls that completed, i.e. `step_finish` events; after the `steps`-th one that asked for
  more tools (reason `tool-calls`), OpenCode is stopped before its next call;
- cost: the sum of `step_finish.cost` (priced from `ModelConfig.price_per_million`), checked the same way;
- wall time of the whole run.
A limit stops OpenCode and records `exit_status` LimitsExceeded (the limit is named in opencode.stderr.log).
A failing model server ends the run as an infrastructure error as soon as the relay has seen `fail_after`
failed calls in a row (OpenCode alone retries for ~75 s), or OpenCode reports an `error` event.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
import time
from dataclasses import asdict
from pathlib import Path

from repoanchor.scaffolds.environments.docker_container import container_environment
from repoanchor.scaffolds.environments.local import Environment
from repoanchor.scaffolds.environments.scratch import scratch_folder
from repoanchor.scaffolds.models.model import ModelConfig, redact
from repoanchor.scaffolds.models.relay import ModelRelay
from repoanchor.scaffolds.opencode.events import Progress, follow, model_failure, read_events
from repoanchor.scaffolds.opencode.process import (
    FORWARD_PORT,
    HOME,
    IN_CONTAINER,
    ContainerProcess,
    LocalProcess,
    mounts,
    relay_socket,
)
from repoanchor.scaffolds.opencode.setup import (
    PROVIDER,
    find_opencode,
    find_rg,
    local_environment,
    model_id,
    seed_home,
    variables,
)
from repoanchor.scaffolds.records import InfraError, Limits, RunRecord
from repoanchor.scaffolds.trajectories import trajectory as normalised
from repoanchor.scaffolds.trajectories.opencode_events import FINISHED, read_opencode_events
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from repoanchor.scaffolds.trajectories.trajectory import TrajectoryError

EVENTS_FILE = "opencode.events.jsonl"
EXPORT_FILE = "opencode.export.json"
STDERR_FILE = "opencode.stderr.log"
TRAJECTORY_FILE = "trajectory.json"
LIMITS_EXCEEDED = "LimitsExceeded"
OPENAI_BASE = "https://api.openai.com/v1"
MESSAGE_CHARS = 2000
POLL_SECONDS = 0.1
DRAIN_SECONDS = 15.0
# After the model refused a request (context window...), OpenCode writes its own `error` event and ends; it is
# killed only once that event is in (so the trajectory shows the ending), or after this long without it.
ENDING_GRACE_SECONDS = 10.0


class OpenCode:
    name = "opencode"

    def __init__(self, *, key_env: str = "OPENAI_API_KEY", fail_after: int = 2) -> None:
        self.key_env = key_env
        """The host variable holding the upstream API key; only the relay reads it."""
        self.fail_after = fail_after
        """Failed model calls in a row (as the relay saw them) that end the run as an infrastructure error."""

    mounts = staticmethod(mounts)

    def run(self, prompt: str, env: Environment, model: ModelConfig, limits: Limits, out: Path) -> RunRecord:
        """Run OpenCode in `env`; writes run.json, trajectory.json and OpenCode's own files into `out`.

        `prompt` is the whole first user message, already rendered by the caller (task.j2 for a plain run, an
        anchor stage template for RepoAnchor); it goes to OpenCode on stdin exactly as given.
        """
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name in (EVENTS_FILE, EXPORT_FILE, STDERR_FILE):
            (out / name).unlink(missing_ok=True)
        record = RunRecord(scaffold=self.name, model=model.model, environment=env.name, prompt=prompt)
        started, progress, process = time.monotonic(), Progress(), None
        scratch = scratch_folder("opencode")
        try:
            try:
                socket = relay_socket(env.container) if env.name == "docker" else None
                relay = ModelRelay(
                    _upstream(model), key_env=self.key_env, timeout=model.timeout, unix_socket=socket,
                    model=model_id(model),
                )  # fmt: skip
                with relay:
                    try:
                        process = self._launch(env, model, limits, relay, prompt, out, scratch)
                        try:
                            self._watch(process, relay, limits, model, progress, out, started)
                        finally:
                            process.kill()  # also whatever the agent left running in the background
                    finally:
                        record.relay_refusals = [asdict(refusal) for refusal in relay.refusals]
            except InfraError as error:
                progress.infra = progress.infra or error
            return self._finish(record, env, model, out, process, progress, started)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _launch(self, env, model, limits, relay: ModelRelay, prompt: str, out: Path, scratch: Path):
        args = ["run", "--format", "json", "-m", f"{PROVIDER}/{model_id(model)}"]
        args += ["--dir", env.workdir, "--title", f"repoanchor {out.name}"]
        if env.name == "docker":
            base_url = f"http://127.0.0.1:{FORWARD_PORT}{relay.prefix}"
            extra = variables(model, limits, base_url, HOME, relay.token) | {"HOME": HOME, "TMPDIR": f"{HOME}/tmp"}
            extra["PATH"] = f"{IN_CONTAINER}/bin:{env.env['PATH']}"
            return ContainerProcess(env, args, container_environment({**env.env, **extra}), prompt, out / STDERR_FILE)
        binary, rg = find_opencode(), find_rg()
        home = scratch / "home"
        seed_home(home)
        process_env = local_environment(model, limits, relay.base_url, home, rg, relay.token)
        return LocalProcess([str(binary), *args], process_env, env.workdir, prompt, out / STDERR_FILE)

    def _watch(self, process, relay: ModelRelay, limits: Limits, model, progress: Progress, out, started) -> None:
        """Copy events to the events file as they arrive; stop OpenCode at a limit or a failing model."""
        lines: queue.Queue[bytes | InfraError | None] = queue.Queue()
        reader = threading.Thread(target=read_events, args=(process, out / EVENTS_FILE, lines), daemon=True)
        reader.start()
        priced, stopped_at, ended_at = model.price_per_million is not None, None, None
        while True:
            try:
                line = lines.get(timeout=POLL_SECONDS)
            except queue.Empty:
                line = b""
                if stopped_at and time.monotonic() - stopped_at > DRAIN_SECONDS:
                    break  # killed, yet the stream does not end: give up on the rest
            if line is None:
                break
            if stopped_at:
                continue  # stopped: only drain what is left
            if isinstance(line, InfraError):
                progress.infra = line
            else:
                follow(line, progress, limits, priced)
            if limits.wall_seconds and time.monotonic() - started > limits.wall_seconds:
                progress.stop = progress.stop or f"wall time limit {limits.wall_seconds:g} s reached"
            if relay.ending:  # the model refused the request itself: the run ends as the agent's, graded
                progress.ending = progress.ending or relay.ending
            elif relay.consecutive_failures >= self.fail_after or progress.error:
                progress.infra = progress.infra or model_failure(relay, progress.error)
            if progress.ending and not stopped_at:
                ended_at = ended_at or time.monotonic()
                if progress.error or time.monotonic() - ended_at > ENDING_GRACE_SECONDS:
                    stopped_at = time.monotonic()
                    process.kill()
                continue
            if progress.stop or progress.infra:
                stopped_at = time.monotonic()
                process.kill()
        reader.join(timeout=DRAIN_SECONDS)
        process.wait()
        progress.ending = progress.ending or relay.ending  # OpenCode may have given up on the refusal first

    def _finish(self, record: RunRecord, env, model, out: Path, process, progress: Progress, started) -> RunRecord:
        if progress.stop:
            record.exit_status = LIMITS_EXCEEDED
            with (out / STDERR_FILE).open("a", encoding="utf-8") as log:
                log.write(f"[repoanchor] stopped OpenCode: {progress.stop}\n")
            record.exit_message = str(progress.stop)
        if process is not None and progress.session_id:
            _export(process, progress.session_id, out)
        record.raw = [name for name in (EVENTS_FILE, EXPORT_FILE, STDERR_FILE) if (out / name).is_file()]
        for name in record.raw:  # no key should be there; nothing secret-looking leaves the run regardless
            path = out / name
            path.write_text(redact(path.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
        if process is not None:
            trajectory = _trajectory(out)
            if progress.ending:
                record.exit_status, record.exit_message = progress.ending[0], progress.ending[1][:MESSAGE_CHARS]
            elif not (progress.stop or progress.infra):
                if process.wait() != 0 and trajectory.exit_status != FINISHED:
                    progress.infra = InfraError("opencode_failed", f"OpenCode exited {process.wait()}: {_tail(out)}")
                record.exit_status = trajectory.exit_status
            trajectory.exit_status = record.exit_status or trajectory.exit_status
            normalised.save(trajectory, out / TRAJECTORY_FILE)
            record.trajectory = TRAJECTORY_FILE
            record.input_tokens, record.output_tokens = trajectory.input_tokens, trajectory.output_tokens
            # Unpriced, OpenCode counts 0 USD: unknown, not free.
            record.cost = trajectory.cost if model.price_per_million is not None else None
        record.steps = progress.steps
        try:
            record.patch = env.patch()
        except InfraError as error:
            progress.infra = progress.infra or error
        if progress.infra:
            record.exit_status = None  # an infrastructure failure is not an ending of the agent's own
            record.infra_error = progress.infra.kind
            record.infra_message = redact(progress.infra.message)[:MESSAGE_CHARS]
        record.wall_seconds = round(time.monotonic() - started, 3)
        record.save(out)
        return record


def _upstream(model: ModelConfig) -> str:
    """The OpenAI-compatible base URL the relay forwards to."""
    if model.api_base:
        return model.api_base
    if "/" in model.model and not model.model.startswith("openai/"):
        raise InfraError(
            "model_bad_request",
            f"OpenCode talks to OpenAI-compatible endpoints only; give {model.model} an api_base (a LiteLLM proxy)",
        )
    return OPENAI_BASE


def _export(process, session_id: str, out: Path) -> None:
    """`opencode export` (stdout only) into EXPORT_FILE when it is valid JSON; else nothing is written."""
    try:
        code, stdout, _ = process.export(session_id)
        document = json.loads(stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired, InfraError):
        return  # best effort: the trajectory falls back to the event stream
    if code == 0 and isinstance(document, dict):
        (out / EXPORT_FILE).write_bytes(stdout)


def _trajectory(out: Path) -> normalised.Trajectory:
    """The normalised trajectory from the export, else from the event stream; an empty one, noting why, when
    neither can be read."""
    unread = []
    for name in (EXPORT_FILE, EVENTS_FILE):
        if (out / name).is_file():
            try:
                return read_trajectory(out / name)
            except TrajectoryError as error:
                unread.append(f"not read: {error}")
    return read_opencode_events(out / EVENTS_FILE, []).model_copy(update={"notes": unread})


def _tail(out: Path) -> str:
    path = out / STDERR_FILE
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    return text[-MESSAGE_CHARS:].strip() or "no output on stderr"
