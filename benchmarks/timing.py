"""What the benchmarks share: the best of several timed rounds (the least disturbed by other load)."""

from __future__ import annotations

import time


def best(rounds: int, job) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return min(times)
