"""The Ray executor: each attempt is a Ray task (one CPU) on a local or remote Ray cluster, no shared filesystem.

`ray` is imported when an executor is created, never at module import, so the package works without it.
What a unit needs travels with it (shipping.py): its task row and run options, its repository as a git bundle
put once per (repository, commit) into Ray's object store and reused by every repeat and condition, and a hints
file's text. The worker runs the attempt in a temporary folder of its own node and sends the folder back as an
archive; the driver alone writes `out`, unpacking it where the local pool would have written, so result files,
grading and resuming do not depend on the executor. A node needs the package, git, and for container runs the
engine with the images (or a registry); never the driver's folders.

Keys: each node's own environment, as for any run. Set them where `ray start` runs on every node; the driver
never ships them (its own keys are checked only to refuse a matrix that could not run anywhere).
A node lost under a running attempt (killed, OOM, network) is an infrastructure error, `worker_lost`,
retried by the driver like any other; Ray itself never re-runs a task (max_retries=0), so the count is honest.
A unit the driver cannot send (its repository gone, a hints file unreadable) is recorded as crashed with the
reason, and the matrix goes on (the pool, failing in the worker, records the first as environment_setup).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from repoanchor.evals.runs.shipping import run_shipped, travelling, unpack_archive
from repoanchor.scaffolds.environments.bundle import bundle_repository
from repoanchor.scaffolds.records import InfraError


class RayExecutor:
    def __init__(self, address: str | None = None, workers: int | None = None, num_cpus: int | None = None) -> None:
        import ray

        self._ray = ray
        # Attach to an instance someone else started (a test, a notebook) and leave it running afterwards.
        self._started = not ray.is_initialized()
        if self._started:
            where = {"address": address} if address else {"num_cpus": num_cpus}
            ray.init(**where, include_dashboard=False, log_to_driver=False)
        self._remote = ray.remote(num_cpus=1, max_retries=0)(run_shipped)
        self.slots = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._bundles: dict[tuple[str, str], tuple[Any, str]] = {}
        """(repository, base) -> (object ref of its bundle, the commit): one upload per task, not per unit."""
        self._folders: dict[Any, Path] = {}
        """Where each handle's attempt folder goes on the driver."""

    def submit(self, unit, folder: Path) -> Any:
        try:
            handle = self._remote.remote(*self._parcel(unit))
        except (InfraError, OSError, ValueError) as exc:  # recorded as the unit's crash; the matrix goes on
            handle = self._ray.put({"error": f"could not send {unit.unit_id} to the cluster: {exc}"})
        self._folders[handle] = folder
        return handle

    def _parcel(self, unit) -> tuple:
        """run_shipped's arguments: the travelling unit, the hints file's text, the bundle's object ref."""
        bundle, commit = self._bundle(unit.task.repo, unit.task.base_commit)
        hints_file = unit.options.hints_file
        hints_text = Path(hints_file).read_text(encoding="utf-8") if hints_file else None
        return travelling(unit, commit), hints_text, bundle

    def _bundle(self, repo: Path, base: str) -> tuple[Any, str]:
        key = (str(repo), base)
        if key not in self._bundles:
            data, commit = bundle_repository(repo, base)
            self._bundles[key] = (self._ray.put(data), commit)
        return self._bundles[key]

    def wait(self, handles: Collection[Any]) -> list[tuple[Any, dict]]:
        ready, _ = self._ray.wait(list(handles), num_returns=1)
        return [(ref, self._outcome(ref)) for ref in ready]

    def _outcome(self, ref) -> dict:
        errors = self._ray.exceptions
        folder = self._folders.pop(ref)
        try:
            outcome = self._ray.get(ref)
        except errors.RayTaskError as exc:  # raised inside the task despite run_shipped's guard
            return {"error": str(exc)}
        except errors.RayError as exc:  # the worker or its node died
            return {"lost": f"ray worker lost: {type(exc).__name__}: {exc}"}
        archive = outcome.pop("archive", None)
        if archive is not None:
            try:
                unpack_archive(archive, folder)
            except Exception as exc:  # a corrupt or unsafe archive: the attempt's files are not trustworthy
                return {"error": f"could not unpack the attempt archive into {folder}: {type(exc).__name__}: {exc}"}
        return outcome

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
