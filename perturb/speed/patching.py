"""Swapping methods of LibCST classes for faster equivalents, only while our own code runs.

`codegen.emitting` and `emission` use this: the swap is made by the outermost of
nested blocks in any thread and undone when the last one ends.
"""

from __future__ import annotations

import threading

_INHERITED = object()


class ClassPatch:
    """`(owner, name, replacement)` swaps made while any block is open. An attribute `owner` only inherits is
    set on `owner` and removed again afterwards, so the inherited one is back."""

    def __init__(self, *swaps: tuple[type, str, object]) -> None:
        self._swaps = swaps
        self._originals = [vars(owner).get(name, _INHERITED) for owner, name, _ in swaps]
        self._lock = threading.Lock()
        self._depth = 0

    def applied(self) -> ClassPatch:
        """The swaps, as a re-entrant context manager (itself: no generator to open per block)."""
        return self

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                for owner, name, replacement in self._swaps:
                    setattr(owner, name, replacement)
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for (owner, name, _), original in zip(self._swaps, self._originals, strict=True):
                    if original is _INHERITED:
                        delattr(owner, name)
                    else:
                        setattr(owner, name, original)
