"""One parse per file per variant across the tree transforms (constants, then proxies, then masking).

Each tree transform reads the modules it selects from the variant as the previous one left them. A transform
that writes a module hands over the tree it emitted the bytes from, and a module read and parsed is kept too,
so the next transform to read the same bytes gets that tree instead of parsing them again. Entries are keyed
by path and checked against the bytes read: a file rewritten or rolled back since simply misses. LibCST trees
are immutable, so one tree may serve several transforms. Only modules a later transform selects are kept
(`expect`; each transform selects its own share of the files), and the oldest entries go once the sources
held pass `max_bytes` (a tree takes about twenty times its source's memory).
"""

from __future__ import annotations

import libcst as cst

MAX_SOURCE_BYTES = 64 * 1024 * 1024


class ParsedModules:
    def __init__(self, max_bytes: int = MAX_SOURCE_BYTES) -> None:
        self._entries: dict[str, tuple[bytes, cst.Module]] = {}
        self._bytes = 0
        self.max_bytes = max_bytes
        self.hits = self.parses = 0
        self._wanted: frozenset[str] | None = None
        """Modules whose trees are kept from now on; None: every one."""

    def expect(self, reading: frozenset[str], later: frozenset[str]) -> None:
        """The next transform reads the modules in `reading`, and the ones after it those in `later`: trees of
        other modules go now, and from here on a tree is kept only for a module in `later`."""
        self._wanted = later
        for rel in [rel for rel in self._entries if rel not in reading and rel not in later]:
            self._drop(rel)

    def parse(self, rel: str, data: bytes) -> cst.Module:
        """The tree of `data`, the contents of `rel`: the one kept for those very bytes, or a fresh parse
        (whose errors propagate, as `cst.parse_module`'s)."""
        entry = self._entries.get(rel)
        if entry is not None and entry[0] == data:
            self.hits += 1
            return entry[1]
        self.parses += 1
        module = cst.parse_module(data)
        self.keep(rel, data, module)
        return module

    def keep(self, rel: str, data: bytes, module: cst.Module) -> None:
        """`module` is what `rel` holds when it holds `data` (a transform emitted `data` from it)."""
        self._drop(rel)
        if self._wanted is not None and rel not in self._wanted:
            return
        self._entries[rel] = (data, module)
        self._bytes += len(data)
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            self._drop(next(iter(self._entries)))  # the oldest

    def _drop(self, rel: str) -> None:
        entry = self._entries.pop(rel, None)
        if entry is not None:
            self._bytes -= len(entry[0])
