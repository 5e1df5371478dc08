"""`run_parallel`'s counterpart on a Ray cluster: each job a Ray task of one CPU, results in job order.

A job's arguments must carry everything it needs: nodes share no folder with the driver (`put` sends bytes,
such as a repository bundle, once into the object store, to be passed to many jobs). A job whose worker or
node is lost is sent again up to LOST_RETRIES times, then `on_death` records it, as run_parallel records a job
that kills its worker; Ray itself never re-runs one (max_retries=0), so every loss is seen here. A job that
raises stops the batch with its own exception type, as it would in a pool. `ray` is imported on first use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

LOST_RETRIES = 2


class RayJobs:
    """A connection to a Ray cluster (`address`; None: a local instance) for the duration of a `with` block."""

    def __init__(self, address: str | None = None) -> None:
        import ray

        self._ray = ray
        self._started = not ray.is_initialized()  # attached to someone else's instance: left running
        if self._started:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)

    def put(self, data: Any) -> Any:
        return self._ray.put(data)

    def run(
        self, fn: Callable, jobs: Sequence[tuple], on_death: Callable[[tuple, BaseException], Any],
        each: Callable[[tuple, Any], Any] | None = None,
    ) -> list:  # fmt: skip
        """`fn(*job)` for every job, results in job order. `each(job, result)`, if given, runs here as each result
        arrives and its value is kept instead: what the driver received is handled (written) at once, not lost
        with the driver if it is killed before the batch ends."""
        remote = self._ray.remote(num_cpus=1, max_retries=0)(fn)
        inflight = {remote.remote(*job): index for index, job in enumerate(jobs)}
        results: dict[int, Any] = {}
        lost: Counter[int] = Counter()
        while inflight:
            ready, _ = self._ray.wait(list(inflight), num_returns=1)
            index = inflight.pop(ready[0])
            try:
                result = self._ray.get(ready[0])
            except self._ray.exceptions.RayTaskError:
                raise
            except self._ray.exceptions.RayError as exc:  # the worker or its node died under the job
                lost[index] += 1
                if lost[index] > LOST_RETRIES:
                    results[index] = on_death(jobs[index], exc)
                else:
                    inflight[remote.remote(*jobs[index])] = index
                continue
            results[index] = each(jobs[index], result) if each else result
        return [results[index] for index in range(len(jobs))]

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()

    def __enter__(self) -> RayJobs:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
