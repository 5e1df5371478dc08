"""Where an instance's build time goes: environment, perturbation, imports, tests; the rest is bookkeeping.

The test runs are the floor of a suite build (issue 19 asks bookkeeping + perturbation to stay under 20% of
them), so each instance's result records its seconds per stage and the suite manifest's `timing` holds them
(`instance_stages`). Stages never overlap: a stage timed inside another is subtracted from it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

STAGES = ("environment", "perturbation", "imports", "tests")


class StageClock:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self._open: list[list] = []
        """[stage, start, seconds spent in stages opened inside it] of each stage being timed."""

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        frame = [name, time.monotonic(), 0.0]
        self._open.append(frame)
        try:
            yield
        finally:
            self._open.pop()
            spent = time.monotonic() - frame[1]
            self.seconds[name] = self.seconds.get(name, 0.0) + spent - frame[2]
            if self._open:
                self._open[-1][2] += spent

    def record(self, total: float) -> dict[str, float]:
        """Seconds per stage, and `bookkeeping`: whatever of `total` no stage took."""
        timed = {name: round(seconds, 3) for name, seconds in self.seconds.items()}
        return timed | {"bookkeeping": round(max(0.0, total - sum(self.seconds.values())), 3)}


def timed(clock: StageClock | None, name: str):
    """`clock.stage(name)`, or nothing where no clock is kept (a suite validated after its build)."""
    return clock.stage(name) if clock is not None else nullcontext()
