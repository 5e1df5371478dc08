"""Holding Python's cyclic garbage collector off for a burst of allocation that makes no cycles.

Parsing (LibCST or `ast`) allocates hundreds of thousands of objects that reference counting frees;
the collector's repeated passes over that growing heap cost a fifth of the work and find nothing.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def cyclic_gc_deferred():
    """Hold the collector off inside the block and let it run after, as it was before the block.

    Cyclic garbage made inside (astroid trees link parents and children) is only delayed: the
    collector runs again once the block is done. Nested blocks leave it off until the outermost ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
