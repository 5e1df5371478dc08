"""Where the matrix's units run: a local process pool (default) or Ray, behind one small protocol.

An executor only runs attempts and hands back outcomes; the driver (run_matrix.py) decides what to run,
retries, and writes every result file, so resumability does not depend on which executor ran a unit.
An outcome is one of
    {"summary": <run_task's summary>}   the run ended (the agent's ending, or an infra error inside it)
    {"error": <traceback>}             the run raised: a bug, recorded as `crashed`, not retried
    {"lost": <message>}                the worker process died under it: infrastructure, retried
"""

from __future__ import annotations

import multiprocessing
import os
import select
import threading
import traceback
from collections.abc import Collection
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

from repoanchor.evals.runs.attempt import run_attempt
from repoanchor.evals.runs.executor_ray import RayExecutor
from repoanchor.evals.runs.matrix import Unit

PRELOAD = ["litellm", "repoanchor.evals.runs.run_one"]


class Executor(Protocol):
    slots: int
    """How many attempts may run at once; the driver never submits more (the budget check needs that)."""

    def submit(self, unit: Unit, folder: Path) -> Any: ...

    def wait(self, handles: Collection[Any]) -> list[tuple[Any, dict]]:
        """Block until at least one of `handles` finished; (handle, outcome) for each that did."""
        ...

    def close(self) -> None: ...


def _start_worker(driver: int, environ: dict[str, str]) -> None:
    """Runs first in every pool worker."""
    _exit_with(driver)
    # The fork server was started with the environment of its time; a worker gets the driver's of now.
    os.environ.clear()
    os.environ.update(environ)


def _exit_with(driver: int) -> None:
    """A worker exits the moment the driver does: a SIGKILLed driver must not leave workers running
    agents (and holding its output pipes) while a resumed driver starts over. The worker's parent is the
    fork server, not the driver, so PR_SET_PDEATHSIG cannot say it; a pidfd of the driver can (Linux)."""
    try:
        handle = os.pidfd_open(driver)
    except ProcessLookupError:  # already gone
        os._exit(1)
    except (AttributeError, OSError):  # no pidfds here: staging folders still keep a stale worker's files apart
        return
    threading.Thread(target=_exit_when_readable, args=(handle,), name="driver-watch", daemon=True).start()


def _exit_when_readable(handle: int) -> None:
    select.select([handle], [], [])  # a pidfd turns readable when its process ends
    os._exit(1)


def _context():
    """Workers fork from a fork server that has imported litellm once (about 5 s a process otherwise),
    never from the driver itself: the driver runs threads (progress display, servers in tests), and
    forking a threaded process can copy a held lock into the child. The fork server runs none."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as models.py: never download a price map
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


class LocalPool:
    """A process pool on this machine."""

    def __init__(self, workers: int | None = None) -> None:
        self.slots = workers or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None
        self._origin: dict[Future, ProcessPoolExecutor] = {}
        """Which pool runs each future: only a failure of the current pool may replace it."""

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:  # created lazily, and again after a worker death broke the last one
            self._pool = ProcessPoolExecutor(
                self.slots, mp_context=_context(), initializer=_start_worker, initargs=(os.getpid(), dict(os.environ))
            )
        return self._pool

    def submit(self, unit: Unit, folder: Path) -> Future:
        try:
            future = self._executor().submit(run_attempt, unit, str(folder))
        except BrokenProcessPool:
            self._drop(self._pool)
            future = self._executor().submit(run_attempt, unit, str(folder))
        self._origin[future] = self._pool
        return future

    def wait(self, handles: Collection[Future]) -> list[tuple[Future, dict]]:
        done, _ = wait(handles, return_when=FIRST_COMPLETED)
        return [(future, self._outcome(future)) for future in done]

    def _outcome(self, future: Future) -> dict:
        origin = self._origin.pop(future, None)
        try:
            return future.result()
        except BrokenProcessPool as exc:  # a worker was killed (OOM killer, a signal): not the agent's doing
            # Every future of a broken pool fails; the first replaces the pool, the rest find it replaced.
            self._drop(origin)
            return {"lost": f"worker process died: {exc}"}
        except Exception:  # e.g. the outcome could not be pickled back
            return {"error": traceback.format_exc()}

    def _drop(self, pool: ProcessPoolExecutor | None) -> None:
        if pool is not None and pool is self._pool:
            pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


EXECUTORS = {"local": LocalPool, "ray": RayExecutor}


def make_executor(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    if name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; choose one of {sorted(EXECUTORS)}")
    if name == "local":
        if address:
            raise ValueError("--address is for the ray executor")
        return LocalPool(workers)
    return RayExecutor(address=address, workers=workers)
