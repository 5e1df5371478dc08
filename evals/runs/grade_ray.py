"""Grading on a Ray cluster without shared folders: `repoanchor grade --executor ray`.

A grade travels as its unit (repository path replaced, as for runs), its ground truth (grading needs it; a grade
is never an agent's task), its final patch, and the task repository as a git bundle of the commit grading checks
out (the repository's HEAD, as the local grader's clone does), put once per repository into the object store.
The node grades in a temporary folder of its own, with its own venv cache and images, and returns the grade;
the driver alone writes grade.json (grade_runs.grade_matrix), so grades are the same wherever they were made.
A node lost under a grade is retried up to LOST_RETRIES times, then the grade stops with an error naming the
unit; the grades already made are written, and a rerun makes the rest. A grade that raises stops grading as it
does locally (Ray raises the task's own exception type).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from repoanchor.evals.harness.patch_guard import Policy
from repoanchor.evals.runs.grade_runs import Judged, judge
from repoanchor.evals.runs.shipping import travelling
from repoanchor.scaffolds.environments.bundle import bundle_repository, unpack_bundle

LOST_RETRIES = 2
GRADED_COMMIT = "HEAD"
"""What the local grader clones (`validate.clone`): the suite repository's HEAD."""


def grade_shipped(unit, record: dict, truth: dict, patch: str, provider: str, test_edits: Policy, bundle) -> dict:
    """A Ray task: the grade of `patch`, made in a temporary folder of this node."""
    with tempfile.TemporaryDirectory(prefix="repoanchor-grade-") as scratch:
        repo = unpack_bundle(bundle, unit.task.base_commit, Path(scratch), working_tree=True)
        here = unit.model_copy(update={"task": unit.task.model_copy(update={"repo": repo})})
        (Path(scratch) / "grades").mkdir()
        return judge(here, record, truth, patch, None, Path(scratch) / "grades", provider, test_edits)


class RayGrader:
    """A `GradeMany` for grade_matrix: every grade a Ray task of one CPU."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        import ray

        self._ray = ray
        self._started = not ray.is_initialized()  # attached to someone else's instance: left running
        if self._started:
            where = {"address": address} if address else {"num_cpus": num_cpus}
            ray.init(**where, include_dashboard=False, log_to_driver=False)
        self._remote = ray.remote(num_cpus=1, max_retries=0)(grade_shipped)
        self._bundles: dict[str, tuple[Any, str]] = {}

    def __call__(self, todo: list[Judged], provider: str, test_edits: Policy, keep) -> None:
        inflight = {self._submit(item, provider, test_edits): item for item in todo}
        lost: Counter[str] = Counter()
        while inflight:
            ready, _ = self._ray.wait(list(inflight), num_returns=1)
            item = inflight.pop(ready[0])
            try:
                grade = self._ray.get(ready[0])
            except self._ray.exceptions.RayTaskError:
                raise  # the grader itself failed: as locally, grading stops with its error
            except self._ray.exceptions.RayError as exc:  # the worker or its node died under the grade
                lost[item[0].unit_id] += 1
                if lost[item[0].unit_id] > LOST_RETRIES:
                    raise RuntimeError(
                        f"grading {item[0].unit_id}: its Ray worker was lost {LOST_RETRIES + 1} times: {exc}"
                    ) from exc
                inflight[self._submit(item, provider, test_edits)] = item
                continue
            keep(item[0], grade)

    def _submit(self, item: Judged, provider: str, test_edits: Policy):
        unit, record, truth, patch = item
        bundle, commit = self._bundle(Path(unit.task.repo))
        return self._remote.remote(travelling(unit, commit), record, truth, patch, provider, test_edits, bundle)

    def _bundle(self, repo: Path) -> tuple[Any, str]:
        if str(repo) not in self._bundles:
            data, commit = bundle_repository(repo, GRADED_COMMIT)
            self._bundles[str(repo)] = (self._ray.put(data), commit)
        return self._bundles[str(repo)]

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()

    def __enter__(self) -> RayGrader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
