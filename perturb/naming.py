"""Plausible, seed-drawn identifiers that collide with nothing in the file.

No fixed marker names: every generated name comes from the caller's `random.Random`, so two
seeds share no generated identifier by construction of the draw, and nothing like
``_semantic_preserving_block`` ever appears in a variant.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import random
import re

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# fmt: off
ADJECTIVES = (
    "active", "actual", "adjusted", "aligned", "base", "bound", "buffered", "cached", "checked", "clean",
    "cleared", "closed", "combined", "computed", "current", "default", "deferred", "derived", "direct",
    "dirty", "effective", "empty", "encoded", "expected", "explicit", "extra", "final", "first", "fixed",
    "folded", "formatted", "fresh", "full", "global", "grouped", "hidden", "implicit", "initial",
    "inner", "inverse", "joined", "last", "lazy", "left", "linked", "live", "local", "locked", "lower",
    "main", "mapped", "marked", "merged", "nested", "next", "normal", "open", "ordered", "outer",
    "packed", "padded", "parsed", "partial", "pending", "plain", "pooled", "previous", "primary",
    "queued", "raw", "ready", "reduced", "resolved", "reversed", "right", "saved", "scaled", "scratch",
    "sealed", "secondary", "shared", "sorted", "spare", "split", "staged", "stale", "static", "stored",
    "strict", "synced", "temp", "total", "trimmed", "upper", "valid", "visible", "working", "wrapped",
)
NOUNS = (
    "acc", "anchor", "arg", "batch", "bin", "block", "bound", "bucket", "buffer", "cache", "cell",
    "chunk", "code", "count", "cursor", "delta", "depth", "digest", "entry", "event", "field", "flag",
    "frame", "gap", "group", "guard", "handle", "hash", "head", "hint", "hook", "index", "item", "key",
    "kind", "label", "layer", "level", "limit", "line", "link", "list", "map", "marker", "mask", "match",
    "mode", "name", "node", "note", "offset", "option", "order", "pair", "part", "path", "peer", "piece",
    "pivot", "point", "pool", "port", "pos", "prefix", "probe", "queue", "range", "rank", "record",
    "ref", "result", "role", "root", "row", "rule", "scope", "seed", "shape", "size", "slot", "source",
    "span", "spec", "stack", "state", "step", "store", "suffix", "table", "tag", "task", "term", "text",
    "tick", "token", "total", "trace", "unit", "value", "view", "width", "word",
)
# fmt: on
RESERVED = (
    frozenset(dir(builtins))
    | frozenset(keyword.kwlist)
    | frozenset(keyword.softkwlist)
    | {
        "self",
        "cls",
        "mcs",
        "args",
        "kwargs",
    }
)


def identifiers_in(code: str) -> set[str]:
    """Every identifier-shaped token in the text: a cheap, conservative 'taken' set."""
    return set(_WORD.findall(code))


def is_safe_identifier(name: str) -> bool:
    """A name we may bind: a valid identifier, not a keyword (hard or soft), not a builtin."""
    return name.isidentifier() and name not in RESERVED and not keyword.iskeyword(name)


def fresh_name(
    rng: random.Random, taken: set[str], *, private: bool = False, avoid: frozenset[str] = frozenset()
) -> str:
    """Draw ``adjective_noun_noun`` plus two digits (e.g. ``pending_cursor_slot42``) until free; claim it.

    About 90 million combinations: a repository-scale variant binds a few hundred names, so two
    seeds sharing even one generated name is a one-in-hundreds event, not a routine marker.
    `avoid`: words no part of the name may hold (`ProjectInfo.absent_words`: a test expects them absent from
    output that may show the code).
    """
    prefix = "_" if private else ""
    adjectives, nouns = vocabulary(avoid)
    for _ in range(1000):
        name = f"{prefix}{rng.choice(adjectives)}_{rng.choice(nouns)}_{rng.choice(nouns)}{rng.randrange(10, 100)}"
        if name not in taken and is_safe_identifier(name):
            taken.add(name)
            return name
    raise RuntimeError("could not draw a fresh identifier in 1000 attempts")


@functools.lru_cache(maxsize=8)
def vocabulary(avoid: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The adjectives and nouns that hold none of the `avoid` words. A word held by most of a list (none of three
    letters or more is) is not avoided in it: a draw from a handful of words would repeat names across seeds."""
    return _without(ADJECTIVES, avoid), _without(NOUNS, avoid)


def _without(words: tuple[str, ...], avoid: frozenset[str]) -> tuple[str, ...]:
    kept = words_avoiding(words, avoid)
    return kept if len(kept) * 2 >= len(words) else words


def words_avoiding(words: tuple[str, ...], avoid: frozenset[str]) -> tuple[str, ...]:
    """The `words` that hold none of the `avoid` words (``pipeline`` holds ``line``)."""
    return tuple(word for word in words if not any(bad in word for bad in avoid))
