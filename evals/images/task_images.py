"""One image per suite task, for harnesses that take SWE-bench images by name (mini-swe-agent's swebench
runner, SWE-agent, OpenHands): the task's environment image with the task's own tree at /testbed, the
spec's setup and install done. Named like SWE-bench's (`__` as `_1776_`), under our own namespace.

Baked from a container of the environment image (the tree copied in, never mounted), committed as the
image; nothing of the suite but the task's repository goes in. `SUITE/../images.json` (or `out`) maps task
ids to image names; a task that fails is recorded with its reason and the others go on.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel

from repoanchor.evals.harness.container_run import env_image_spec
from repoanchor.evals.harness.eval_script import IMAGE_REPO_DIR
from repoanchor.evals.harness.suite_format import SuiteTask, as_task
from repoanchor.evals.images.names import published_image_name
from repoanchor.scaffolds.environments.docker_container import DockerContainer
from repoanchor.scaffolds.records import InfraError

TASK_TEMPLATE = "repoanchor/sweb.eval.x86_64.{instance_id}:{tag}"


class TaskImageRecord(BaseModel):
    task_id: str
    image: str | None = None
    env_image: str | None = None
    error: str | None = None


def task_tag(suite: Path, row: SuiteTask) -> str:
    """The tag: the task's tree, so a rebuilt suite with other trees gets other images."""
    return hashlib.sha256(f"{Path(suite).resolve()}|{row.instance_id}|{row.base_commit}".encode()).hexdigest()[:12]


def bake_task_image(suite: Path, row: SuiteTask, template: str = TASK_TEMPLATE) -> TaskImageRecord:
    record = TaskImageRecord(task_id=row.instance_id)
    try:
        task = as_task(suite, row)
        if not task.source_repo:
            raise InfraError("image_missing", f"{row.instance_id}: the task row has no `repo`, so no environment image")
        spec = env_image_spec({"instance_id": row.instance_id, "repo": task.source_repo, "version": task.version})
        record.env_image = spec.image
        setup = "\n".join([*spec.pre_install, spec.install or "true"])
        name = published_image_name(row.instance_id, template.replace("{tag}", task_tag(suite, row)))
        with DockerContainer(task.repo, task.base_commit, image=spec.image, workdir=IMAGE_REPO_DIR, setup=setup) as env:
            repository, _, tag = name.rpartition(":")
            labels = {"repoanchor": "task", "repoanchor.kind": "task", "repoanchor.task": row.instance_id}
            changes = ["WORKDIR /testbed", 'CMD ["/bin/bash"]']
            env.container.commit(repository=repository, tag=tag, changes=changes, conf={"Labels": labels})
        record.image = name
    except InfraError as error:
        record.error = f"{error.kind}: {error.message}"
    return record
