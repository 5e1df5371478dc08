"""The large-stack worker thread survives fork: a pool forked after the parent used it must not hang."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

from repoanchor.perturb.engine import run_with_big_stack


def _depth(n: int) -> int:
    return 0 if n == 0 else 1 + _depth(n - 1)


def _in_child(n: int) -> int:
    return run_with_big_stack(_depth, n)


def test_big_stack_thread_recurses_deeply_and_survives_fork():
    assert run_with_big_stack(_depth, 15_000) == 15_000
    with ProcessPoolExecutor(2) as pool:
        assert list(pool.map(_in_child, [10, 12_000], timeout=60)) == [10, 12_000]
