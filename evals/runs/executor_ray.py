"""The Ray executor: each attempt is a Ray task (one CPU) on a local or remote Ray instance.

`ray` is imported when an executor is created, never at module import, so the package works without it.
The driver keeps writing every result file; workers write only their attempt folder. On a multi-node
cluster every node therefore needs the driver's paths (suite folders and the matrix's `out` on a shared
filesystem) and its own API keys in the environment: keys are never shipped with the task.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any


class RayExecutor:
    def __init__(self, address: str | None = None, workers: int | None = None, num_cpus: int | None = None) -> None:
        import ray

        from repoanchor.evals.runs.attempt import run_attempt

        self._ray = ray
        # Attach to an instance someone else started (a test, a notebook) and leave it running afterwards.
        self._started = not ray.is_initialized()
        if self._started:
            where = {"address": address} if address else {"num_cpus": num_cpus}
            ray.init(**where, include_dashboard=False, log_to_driver=False)
        # Ray must not re-run a task whose worker died: the driver retries it as an infrastructure error,
        # counted like any other, so both executors report the same numbers.
        self._remote = ray.remote(num_cpus=1, max_retries=0)(run_attempt)
        self.slots = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))

    def submit(self, unit, folder: Path) -> Any:
        return self._remote.remote(unit, str(folder))

    def wait(self, handles: Collection[Any]) -> list[tuple[Any, dict]]:
        ready, _ = self._ray.wait(list(handles), num_returns=1)
        return [(ref, self._outcome(ref)) for ref in ready]

    def _outcome(self, ref) -> dict:
        errors = self._ray.exceptions
        try:
            return self._ray.get(ref)
        except errors.RayTaskError as exc:  # raised inside the task despite run_attempt's guard
            return {"error": str(exc)}
        except errors.RayError as exc:  # the worker or its node died
            return {"lost": f"ray worker lost: {type(exc).__name__}: {exc}"}

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
