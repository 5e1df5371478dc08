"""mini-swe-agent 2.4 as a scaffold: its real DefaultAgent and LitellmModel, our environment and records.

mini-swe-agent runs in this process. Its agent loop, tool-call parsing and litellm HTTP client are its own;
only the environment is ours (`MiniEnvironment`, a shim over `Environment`), so commands run in the same
sandboxes as every other scaffold's and the patch is the environment's diff, not whatever the agent printed
when it submitted. Model and environment failures end up in `infra_error`, never as an exception out of `run`.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from repoanchor.prompts import render
from repoanchor.scaffolds.environments.local import Environment
from repoanchor.scaffolds.environments.scratch import scratch_prefix
from repoanchor.scaffolds.mini.environment import MiniEnvironment
from repoanchor.scaffolds.mini.templates import TemplateSet
from repoanchor.scaffolds.models.model import ModelConfig, classify_exception, exception_ending, redact
from repoanchor.scaffolds.models.pricing import litellm_knows_price
from repoanchor.scaffolds.records import InfraError, Limits, RunRecord
from repoanchor.scaffolds.trajectories import trajectory as normalised
from repoanchor.scaffolds.trajectories.readers import read_trajectory

RAW_FILE = "mini.traj.json"
TRAJECTORY_FILE = "trajectory.json"
MESSAGE_CHARS = 2000


class MiniSweAgent:
    name = "mini-swe-agent"

    def __init__(self, templates: TemplateSet | None = None) -> None:
        self.templates = templates or TemplateSet(name="repoanchor")
        """Which templates mini renders (see templates.py): ours by default, or its SWE-bench ones."""

    def run(self, prompt: str, env: Environment, model: ModelConfig, limits: Limits, out: Path) -> RunRecord:
        """Run the agent in `env`; writes run.json, trajectory.json and mini.traj.json into `out`.

        `prompt` is mini's `task` variable. With our templates it is the whole first user message, already
        rendered by the caller (task.j2 for a plain run, an anchor stage template for RepoAnchor), so it reaches
        the model exactly as given; with mini's SWE-bench templates it is the issue their instance template wraps.
        """
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for stale in (RAW_FILE, TRAJECTORY_FILE):  # a rerun into the same folder must not report the last run
            (out / stale).unlink(missing_ok=True)
        ours = {"system": render("mini_system", workdir=env.workdir)} if self.templates.name == "repoanchor" else {}
        record = RunRecord(scaffold=self.name, model=model.model, environment=env.name, prompt=prompt,
                           system_prompt=ours.get("system"), templates=self.templates.describe())  # fmt: skip
        started, agent, priced = time.monotonic(), None, False
        with tempfile.TemporaryDirectory(prefix=scratch_prefix("mini")) as scratch, _scoped_price(model):
            try:
                agent, priced = _agent(env, model, limits, out / RAW_FILE, Path(scratch), self.templates)
                record.system_prompt, record.prompt = _first_messages(agent, self.templates, prompt, ours)
                # Prompts go in as template variables, so mini's jinja never re-reads braces in the task text.
                info = agent.run(prompt, **ours)
                record.exit_status = info.get("exit_status")
            except InfraError as error:  # from the environment: the engine went away, an exec failed
                _infra(record, error.kind, error.message)
            except Exception as error:
                if not _is_model_error(error):
                    record.exit_status = type(error).__name__
                    _finish(record, agent, priced, env, out, started)  # keep what was written; a bug stays loud
                    raise
                where = f"{model.model} at {model.api_base or 'its provider'}"
                ending = exception_ending(error)
                if ending:  # the request itself was refused (context window...): the agent's ending, graded
                    said = f"{where} refused the request (HTTP {getattr(error, 'status_code', '?')}): {error}"
                    record.exit_status, record.exit_message = ending, redact(said)[:MESSAGE_CHARS]
                else:
                    _infra(record, f"model_{classify_exception(error)}", f"the call to {where} failed: {error}")
        return _finish(record, agent, priced, env, out, started)


def _first_messages(agent, templates: TemplateSet, task: str, variables: dict) -> tuple[str, str]:
    """The system and user messages mini will send, rendered as mini renders them (jinja2, StrictUndefined,
    its agent's template variables), for run.json."""
    from jinja2 import StrictUndefined, Template

    values = agent.get_template_vars(task=task, **variables)
    return tuple(
        Template(text, undefined=StrictUndefined).render(**values) for text in (templates.system, templates.instance)
    )


def _agent(env: Environment, model: ModelConfig, limits: Limits, traj: Path, scratch: Path, templates: TemplateSet):
    """mini's DefaultAgent with its LitellmModel; returns (agent, whether the model has a known price)."""
    prepare_imports(model.max_retries)
    import litellm
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.models import get_model

    litellm.suppress_debug_info = True  # no "Provider List" / "Give Feedback" banners on errors
    registry = _price_registry(model, scratch)
    priced = registry is not None or litellm_knows_price(model.model)
    config: dict[str, Any] = {
        "model_name": model.model,
        "model_kwargs": _model_kwargs(model),
        # A known price must produce a real cost (else the cost limit silently never fires); an unknown
        # one must not crash the run. Passed here, since mini reads $MSWEA_COST_TRACKING only at import.
        "cost_tracking": "default" if priced else "ignore_errors",
        **templates.mini_model_fields(),
    }
    if registry is not None:
        config["litellm_model_registry"] = str(registry)
    return DefaultAgent(
        get_model(config=config),
        MiniEnvironment(env, limits.command_timeout),
        **templates.agent_config(),
        step_limit=limits.steps,
        cost_limit=limits.cost,
        # mini checks wall time before each model call, in whole seconds.
        wall_time_limit_seconds=math.ceil(limits.wall_seconds),
        output_path=traj,  # re-saved after every step, so a crash loses nothing
    ), priced


def prepare_imports(max_retries: int) -> None:
    """The environment mini-swe-agent and litellm read: set before (and, for retries, at) each use."""
    os.environ["MSWEA_SILENT_STARTUP"] = "1"  # else a banner on stdout at import
    if "minisweagent" not in sys.modules:
        # mini creates this folder and loads a .env from it at import: never the user's ~/.config.
        # One fixed, empty folder per user (not one per process, which would pile up in /tmp).
        config_dir = private_folder(Path(tempfile.gettempdir()) / f"repoanchor-mswea-{os.getuid()}")
        os.environ["MSWEA_GLOBAL_CONFIG_DIR"] = str(config_dir)
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # else litellm fetches prices from the internet
    # Read by mini at every query; its retries (4-60 s backoff) are the only ones, see _model_kwargs.
    os.environ["MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT"] = str(max_retries + 1)


def private_folder(path: Path) -> Path:
    """`path` as a folder only this user can use, made 0700 if absent. An existing one is used only if it is a
    real folder (no symlink), ours, and closed to everyone else: whoever could write there could leave a `.env`
    that mini-swe-agent loads (a base URL of their own, to receive the key)."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    problems = []
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        problems.append("is not a folder (a symlink or a file)")
    elif info.st_uid != os.getuid():
        problems.append(f"belongs to uid {info.st_uid}, not to us ({os.getuid()})")
    elif info.st_mode & 0o077:
        problems.append(f"is open to others (mode {stat.S_IMODE(info.st_mode):o}, not 700)")
    if problems:
        raise InfraError(
            "environment_setup",
            f"refusing mini-swe-agent's config folder {path}: it {problems[0]}; someone else may have made it. "
            "Remove it (or set TMPDIR to a folder of your own) and run again",
        )
    return path


def _model_kwargs(model: ModelConfig) -> dict[str, Any]:
    """litellm arguments. Never an api_key: keys come from the environment, and mini saves these in its traj."""
    kwargs: dict[str, Any] = {
        "timeout": model.timeout,
        "temperature": model.temperature,
        "drop_params": True,
        "max_retries": 0,  # the openai client would otherwise retry twice more inside every attempt
    }
    if model.api_base:
        kwargs["api_base"] = model.api_base
    return kwargs


def _price_registry(model: ModelConfig, scratch: Path) -> Path | None:
    """A litellm model registry with the configured price, so litellm's own cost code prices each call."""
    if model.price_per_million is None:
        return None
    per_input, per_output = model.price_per_million
    provider = model.model.split("/", 1)[0] if "/" in model.model else "openai"
    entry = {
        "input_cost_per_token": per_input / 1e6,
        "output_cost_per_token": per_output / 1e6,
        "litellm_provider": provider,
        "mode": "chat",
    }
    path = scratch / "litellm_registry.json"
    path.write_text(json.dumps({model.model: entry}), encoding="utf-8")
    return path


@contextlib.contextmanager
def _scoped_price(model: ModelConfig):
    """litellm's price map is process-wide: a price registered for this run must not price a later run of the
    same model name that has none (a matrix worker runs many units), so its entries are restored afterwards."""
    if model.price_per_million is None:
        yield
        return
    import litellm

    keys = {model.model, model.model.split("/", 1)[-1]}
    saved = {key: copy.deepcopy(litellm.model_cost[key]) for key in keys if key in litellm.model_cost}
    try:
        yield
    finally:
        for key in keys:
            if key in saved:
                litellm.model_cost[key] = saved[key]
            else:
                litellm.model_cost.pop(key, None)


def _is_model_error(error: Exception) -> bool:
    """litellm's exceptions all derive from the openai SDK's APIError (status, connection and timeout)."""
    import openai

    return isinstance(error, openai.APIError)


def _infra(record: RunRecord, kind: str, message: str) -> None:
    record.exit_status = None  # an infrastructure failure is not an ending of the agent's own
    record.infra_error = kind
    record.infra_message = redact(message)[:MESSAGE_CHARS]


def _finish(record: RunRecord, agent, priced: bool, env: Environment, out: Path, started: float) -> RunRecord:
    """Redact and normalise mini's trajectory, take the environment's patch and write run.json."""
    record.wall_seconds = round(time.monotonic() - started, 3)
    raw = out / RAW_FILE
    if raw.is_file():
        # Belt and braces: no key should be in there, but nothing secret-looking may leave the run either.
        raw.write_text(json.dumps(redact(json.loads(raw.read_text(encoding="utf-8"))), indent=1), encoding="utf-8")
        trajectory = read_trajectory(raw)
        normalised.save(trajectory, out / TRAJECTORY_FILE)
        record.trajectory, record.raw = TRAJECTORY_FILE, [RAW_FILE]
        record.input_tokens, record.output_tokens = trajectory.input_tokens, trajectory.output_tokens
    if agent is not None:
        record.steps = agent.n_calls
        record.cost = agent.cost if priced else None  # unpriced: unknown, not free
    try:
        record.patch = env.patch()
    except InfraError as error:
        if record.infra_error is None:  # the agent's ending stands; only the patch is missing
            record.infra_error, record.infra_message = error.kind, redact(error.message)[:MESSAGE_CHARS]
    record.save(out)
    return record
