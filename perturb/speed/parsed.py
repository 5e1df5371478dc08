"""One parse per file per variant across the tree transforms (constants, then proxies, then masking).

Each tree transform reads the modules it selects from the variant as the previous one left them. A transform
that writes a module hands over the tree it emitted the bytes from, and a module read and parsed is kept too,
so the next transform to read the same bytes gets that tree instead of parsing them again. Entries are keyed
by path and checked against the bytes read: a file rewritten or rolled back since simply misses. LibCST trees
are immutable, so one tree may serve several transforms. Only modules a later transform selects are kept
(`expect`; each transform selects its own share of the files), and the oldest entries go once the sources
held pass `max_bytes` (a tree takes about twenty times its source's memory).

Each tree travels with its file's `FileEmission` (the file passes' one, where they made the tree), so a
transform writing a module it read emits only the statements it made (`emission`).
"""

from __future__ import annotations

import libcst as cst

from repoanchor.perturb.speed.emission import FileEmission
from repoanchor.perturb.speed.parsing import parse_source

MAX_SOURCE_BYTES = 64 * 1024 * 1024


class ParsedModules:
    def __init__(self, max_bytes: int = MAX_SOURCE_BYTES) -> None:
        self._entries: dict[str, tuple[bytes, cst.Module, FileEmission]] = {}
        self._last: tuple[str, FileEmission] | None = None
        """The emission of the module read last, kept or not: the transform reading it may write it next."""
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
            self._last = (rel, entry[2])
            return entry[1]
        self.parses += 1
        module = parse_source(data)
        self.keep(rel, data, module)
        return module

    def wanted(self, rel: str) -> bool:
        """Whether a later transform reads `rel` (its tree, once written, is kept)."""
        return self._wanted is None or rel in self._wanted

    def emission(self, rel: str) -> FileEmission:
        """The emission of the tree last read or kept for `rel` (a new one if none is): writing a tree made from
        it re-emits only new statements. Reuse is by node identity, so any emission gives the tree's own code."""
        entry = self._entries.get(rel)
        if entry is not None:
            return entry[2]
        return self._last[1] if self._last is not None and self._last[0] == rel else FileEmission()

    def keep(self, rel: str, data: bytes, module: cst.Module, emission: FileEmission | None = None) -> None:
        """`module` is what `rel` holds when it holds `data` (a transform emitted `data` from it, with
        `emission`, which the tree keeps)."""
        self._drop(rel)
        emission = emission or FileEmission()
        self._last = (rel, emission)
        if not self.wanted(rel):
            return
        self._entries[rel] = (data, module, emission)
        self._bytes += len(data)
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            self._drop(next(iter(self._entries)))  # the oldest

    def _drop(self, rel: str) -> None:
        entry = self._entries.pop(rel, None)
        if entry is not None:
            self._bytes -= len(entry[0])
