"""What the benchmarks share: the best of several timed rounds (the least disturbed by other load), and the CPU
seconds a job spent in this process and the children it waited for."""

from __future__ import annotations

import resource
import time


def best(rounds: int, job) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return min(times)


def cpu_seconds() -> float:
    """User + system seconds of this process and of its children that have ended (worker pools, subprocesses)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best_with_cpu(rounds: int, job) -> tuple[float, float]:
    """The best round's wall seconds, and the fewest CPU seconds of any round."""
    walls, cpus = [], []
    for _ in range(rounds):
        start, spent = time.perf_counter(), cpu_seconds()
        job()
        walls.append(time.perf_counter() - start)
        cpus.append(cpu_seconds() - spent)
    return min(walls), min(cpus)
