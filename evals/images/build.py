"""Build (or find already built) the environment image of each (repo, version) of a dataset.

One image per (repo, version), planned from its first instance. An image is tagged by the digest of its
inputs (base image, Dockerfile, pins, wheels, interpreter), so it is rebuilt only when one changes. Its
labels carry what the harness needs to run a task on it (Python, spec steps) and what a reader needs to
trust it (the Python wanted and used, skipped steps). A failing (repo, version) is recorded with its reason
and the batch goes on.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from repoanchor.evals.images import context, names
from repoanchor.evals.images.requirements import EnvPlan, plan_for
from repoanchor.evals.images.wheelhouse import fetch_wheels, wheel_names
from repoanchor.scaffolds.environments.docker_container import BASE_IMAGE, LABEL, connect
from repoanchor.scaffolds.records import InfraError


class EnvImageRecord(BaseModel):
    repo: str
    version: str | None
    instances: list[str]
    status: Literal["built", "cached", "failed"]
    image: str | None = None
    python_wanted: str | None = None
    python_used: str | None = None
    fallback: str | None = None
    skipped: list[str] = []
    seconds: float = 0.0
    error: str | None = None


@functools.cache
def base_python(base: str) -> str:
    """ "X.Y" of the base image's python3 (Debian's, in the local base)."""
    import docker

    client = connect()
    try:
        probe = "import sys; print('%d.%d' % sys.version_info[:2])"
        out = client.containers.run(base, ["python3", "-c", probe], remove=True, network_mode="none", labels=LABEL)
    except docker.errors.DockerException as error:
        raise InfraError("image_missing", f"cannot run python3 in {base}: {error}") from error
    finally:
        client.close()
    return out.decode().strip()


def interpreter_in_image(plan: EnvPlan, base: str) -> tuple[str, str | None]:
    """(the interpreter the image's venv is made from, the host prefix copied in for it or None)."""
    if plan.python_version == base_python(base):
        return "/usr/bin/python3", None
    probe = "import sys; print(sys.base_prefix)"
    prefix = subprocess.run([plan.python, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    return f"{prefix}/bin/python{plan.python_version}", prefix


def labels_for(plan: EnvPlan, digest: str) -> dict[str, str]:
    return {
        names.KIND_LABEL: "env",
        names.REPO_LABEL: plan.repo,
        names.VERSION_LABEL: str(plan.version),
        "repoanchor.env.digest": digest,
        "repoanchor.env.python": plan.python_version,
        "repoanchor.env.python_wanted": str(plan.python_wanted),
        "repoanchor.env.fallback": plan.fallback or "",
        "repoanchor.env.pre_install": json.dumps(plan.pre_install),
        "repoanchor.env.install": plan.install or "",
        "repoanchor.env.skipped": json.dumps(plan.skipped),
    }


@dataclass
class BuildInputs:
    """Everything an environment image is made of; `tag` is named by their digest."""

    plan: EnvPlan
    wheels: Path
    dockerfile: str
    prefix: str | None
    labels: dict[str, str]
    tag: str


def build_inputs(row: dict[str, Any], repo_cache: Path | None, cache_dir: Path, base: str = BASE_IMAGE) -> BuildInputs:
    """Plan `row`'s (repo, version) and fetch its wheels (both cached); nothing is built yet."""
    return inputs_for(plan_for(row, repo_cache, cache_dir / "venvs"), cache_dir, base)


def inputs_for(plan: EnvPlan, cache_dir: Path, base: str = BASE_IMAGE) -> BuildInputs:
    """A plan's inputs: its wheels fetched (cached in `cache_dir`/wheels), its Dockerfile, labels and tag."""
    wheels = fetch_wheels(plan.python, plan.python_version, plan.requirements, plan.build_requires,
                          cache_dir / "wheels")  # fmt: skip
    interpreter, prefix = interpreter_in_image(plan, base)
    text = context.dockerfile(base, interpreter, prefix, plan.python_version if plan.wrap_interpreter else None)
    client = connect()
    try:
        base_id = client.images.get(base).id
    finally:
        client.close()
    inputs = {"base": base_id, "dockerfile": text, "wheels": wheel_names(wheels), "labels": labels_for(plan, "")}
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    tag = names.env_image_name(plan.repo, plan.version, digest)
    return BuildInputs(plan, wheels, text, prefix, labels_for(plan, digest[:12]), tag)


def build_env_image(row: dict[str, Any], repo_cache: Path | None, cache_dir: Path, base: str = BASE_IMAGE) -> dict:
    """Plan, fetch and build `row`'s environment image; {"image", "status": built|cached, "plan"}."""
    return build_planned(plan_for(row, repo_cache, cache_dir / "venvs"), cache_dir, base)


def build_planned(plan: EnvPlan, cache_dir: Path, base: str = BASE_IMAGE) -> dict:
    """Fetch and build a planned environment image, or find it built; {"image", "status", "plan"}."""
    made = inputs_for(plan, cache_dir, base)
    client = connect()
    try:
        if client.images.list(name=made.tag):
            return {"image": made.tag, "status": "cached", "plan": made.plan}
        build_image(client, made, made.tag)
        return {"image": made.tag, "status": "built", "plan": made.plan}
    finally:
        client.close()


def build_image(client, made: BuildInputs, tag: str, nocache: bool = False, kind: str = "env") -> None:
    """`docker build` of `made` as `tag`, offline; a failed build is an InfraError with the log's tail.
    Only `kind` "env" images are found by the harness (a benchmark's copy must not be)."""
    _build(client, tag, made.dockerfile, made.wheels, made.prefix, {**made.labels, names.KIND_LABEL: kind}, nocache)


def _build(client, tag: str, text: str, wheels: Path, prefix: str | None, labels: dict, nocache: bool) -> None:
    import docker

    with tempfile.TemporaryDirectory(prefix="repoanchor-image-") as scratch:
        archive = context.write_context(Path(scratch) / "context.tar", text, wheels, prefix)
        with archive.open("rb") as stream:
            try:
                client.images.build(fileobj=stream, custom_context=True, tag=tag, labels=labels,
                                    network_mode="none", rm=True, forcerm=True, nocache=nocache)  # fmt: skip
            except docker.errors.BuildError as error:
                log = "".join(str(part.get("stream") or part.get("error") or "") for part in error.build_log)
                raise InfraError("image_build", f"building {tag} failed: {error.msg}\n{log[-3000:]}") from error


def groups(rows: list[dict[str, Any]]) -> dict[tuple[str, str | None], list[dict[str, Any]]]:
    """Rows by (repo, version), in dataset order."""
    found: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault((row["repo"], None if row.get("version") is None else str(row["version"])), []).append(row)
    return found


def build_group(key, rows, repo_cache: Path | None, cache_dir: Path, base: str = BASE_IMAGE) -> EnvImageRecord:
    """One (repo, version): its record, `failed` with the reason rather than an exception."""
    started, record = time.monotonic(), new_record(key, rows)
    made = attempt(record, build_env_image, rows[0], repo_cache, cache_dir, base)
    return finish_record(record, made, time.monotonic() - started)


def new_record(key, rows) -> EnvImageRecord:
    return EnvImageRecord(repo=key[0], version=key[1], instances=[r["instance_id"] for r in rows], status="failed")


def attempt(record: EnvImageRecord, step, *args):
    """`step(*args)`, or None with the failure's reason in `record.error`."""
    try:
        return step(*args)
    except InfraError as error:
        record.error = f"{error.kind}: {error.message}"
    except Exception as error:  # a tool failure for this group: recorded; the other groups go on
        record.error = f"{type(error).__name__}: {error}"
    return None


def finish_record(record: EnvImageRecord, made: dict | None, seconds: float) -> EnvImageRecord:
    """`record` completed from `build_planned`'s answer (None: failed, the reason already in it)."""
    if made is not None:
        plan = made["plan"]
        record.status, record.image, record.skipped = made["status"], made["image"], plan.skipped
        record.python_wanted, record.python_used = plan.python_wanted, plan.python_version
        record.fallback = plan.fallback
    record.seconds = round(seconds, 3)
    return record
