"""Run one function over many jobs in worker processes, with a progress bar, surviving dead workers.

Jobs are submitted before the progress bar starts its refresh thread, so the pool forks its
workers from a single-threaded process. A job whose worker dies breaks the whole pool; the jobs
that were lost with it are retried one at a time in a fresh one-worker pool, so only the job that
really kills its worker is reported to `on_death`, and every other job still runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

J = TypeVar("J")
R = TypeVar("R")


def _bar(label: str, total: int, show: bool) -> Progress:
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),  # stdout is for the command's JSON summary
        disable=not show,
    )
    progress.add_task(label, total=total)
    return progress


def run_parallel(
    fn: Callable[[J], R],
    jobs: Sequence[J],
    workers: int,
    on_death: Callable[[J, BaseException], R],
    *,
    label: str = "",
    show: bool = True,
) -> list[R]:
    """`fn(job)` for every job, results in job order; `fn` should record its own failures, not raise."""
    results: dict[int, R] = {}
    if workers <= 1 or len(jobs) <= 1:
        with _bar(label, len(jobs), show) as bar:
            for index, job in enumerate(jobs):
                results[index] = fn(job)
                bar.advance(bar.task_ids[0])
        return [results[i] for i in range(len(jobs))]
    lost: list[int] = []
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        futures: dict[Future, int] = {pool.submit(fn, job): index for index, job in enumerate(jobs)}
        with _bar(label, len(jobs), show) as bar:
            for future in as_completed(futures):
                index, error = futures[future], future.exception()
                if isinstance(error, BrokenProcessPool):
                    lost.append(index)
                    continue
                results[index] = future.result() if error is None else on_death(jobs[index], error)
                bar.advance(bar.task_ids[0])
    for index in sorted(lost):  # alone in a fresh pool: a second death is this job's own doing
        with ProcessPoolExecutor(max_workers=1) as pool:
            try:
                results[index] = pool.submit(fn, jobs[index]).result()
            except BrokenProcessPool as exc:
                results[index] = on_death(jobs[index], exc)
    return [results[i] for i in range(len(jobs))]
