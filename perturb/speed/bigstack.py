"""Running parser-heavy work on a thread with a large stack, in this process or across worker processes.

LibCST and `ast` recurse once per nesting level; real code (sympy's deepest expressions) needs
more than the main thread's stack and the default recursion limit.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

BIG_STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 20_000

_executor: ThreadPoolExecutor | None = None
_executor_pid: int | None = None


def run_with_big_stack(fn, *args, **kwargs):
    """Run `fn` in a thread with a 512 MiB stack: LibCST recurses deeply on real code.

    The thread belongs to the process that started it: a forked worker inherits the executor
    object but not its thread, so each process makes its own.
    """
    global _executor, _executor_pid
    if _executor is None or _executor_pid != os.getpid():
        _executor_pid = os.getpid()
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
        previous = threading.stack_size(BIG_STACK_BYTES)
        _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="big-stack")
        _executor.submit(lambda: None).result()  # start the thread while the size applies
        threading.stack_size(previous)
    return _executor.submit(fn, *args, **kwargs).result()


def map_chunks(fn: Callable, items: Sequence, workers: int, *args) -> list:
    """[fn(chunk, *args) for each contiguous chunk of `items`], in order, each in a big stack: on `workers`
    processes (a few chunks each, so an uneven chunk does not hold the others up), or here for one worker or
    few items. Merging the results in order gives what one call over all `items` gives, for any `fn` whose
    result over a list is the ordered merge of its results over the list's parts."""
    workers = max(1, workers or os.cpu_count() or 1)
    if workers == 1 or len(items) < 4 * workers:
        return [run_with_big_stack(fn, list(items), *args)]
    count = 4 * workers
    bounds = [len(items) * i // count for i in range(count + 1)]
    chunks = [list(items[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_in_big_stack, [fn] * count, chunks, *([a] * count for a in args)))


def _in_big_stack(fn: Callable, chunk: list, *args):
    return run_with_big_stack(fn, chunk, *args)
