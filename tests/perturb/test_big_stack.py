"""The large-stack worker thread survives fork: a pool forked after the parent used it must not hang; chunks of
work mapped across processes come back in order, each run in a large stack."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from repoanchor.perturb.speed.bigstack import run_with_big_stack


def _depth(n: int) -> int:
    return 0 if n == 0 else 1 + _depth(n - 1)


def _in_child(n: int) -> int:
    return run_with_big_stack(_depth, n)


def test_big_stack_thread_recurses_deeply_and_survives_fork():
    assert run_with_big_stack(_depth, 15_000) == 15_000
    with ProcessPoolExecutor(2) as pool:
        assert list(pool.map(_in_child, [10, 12_000], timeout=60)) == [10, 12_000]


def _pids_and_depth(chunk: list[int], depth: int) -> list[tuple[int, int, int]]:
    def nest(n: int) -> int:
        return 0 if n == 0 else 1 + nest(n - 1)

    return [(item, os.getpid(), nest(depth)) for item in chunk]


@pytest.mark.parametrize("workers", [1, 2])
def test_map_chunks_keeps_order_and_runs_each_chunk_in_a_big_stack(workers: int):
    from repoanchor.perturb.speed.bigstack import map_chunks

    parts = map_chunks(_pids_and_depth, list(range(40)), workers, 5000)  # deeper than the default limit
    rows = [row for part in parts for row in part]
    assert [item for item, _, _ in rows] == list(range(40))
    assert {depth for _, _, depth in rows} == {5000}
    pids = {pid for _, pid, _ in rows}
    if workers == 1:
        assert pids == {os.getpid()}
    else:
        assert os.getpid() not in pids
        assert len(parts) == 8  # four chunks a worker
