"""Plausible, seed-drawn identifiers that collide with nothing in the file.

No fixed marker names: every generated name comes from the caller's `random.Random`, so two
seeds share no generated identifier by construction of the draw, and nothing like
``_semantic_preserving_block`` ever appears in a variant.
"""

from __future__ import annotations

import builtins
import keyword
import random
import re

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

ADJECTIVES = (
    "active",
    "cached",
    "current",
    "default",
    "derived",
    "effective",
    "extra",
    "final",
    "first",
    "initial",
    "inner",
    "last",
    "local",
    "main",
    "merged",
    "next",
    "outer",
    "parsed",
    "partial",
    "pending",
    "previous",
    "primary",
    "raw",
    "resolved",
    "saved",
    "scratch",
    "shared",
    "spare",
    "staged",
    "temp",
    "total",
    "working",
)
NOUNS = (
    "acc",
    "buffer",
    "chunk",
    "count",
    "cursor",
    "entry",
    "flag",
    "handle",
    "head",
    "index",
    "item",
    "key",
    "label",
    "marker",
    "mode",
    "node",
    "offset",
    "part",
    "probe",
    "record",
    "ref",
    "slot",
    "span",
    "state",
    "step",
    "tag",
    "token",
    "unit",
    "value",
    "view",
    "width",
)
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


def fresh_name(rng: random.Random, taken: set[str], *, private: bool = False) -> str:
    """Draw ``adjective_noun`` (or ``_adjective_noun``) until it is free, then claim it."""
    prefix = "_" if private else ""
    for attempt in range(1000):
        name = f"{prefix}{rng.choice(ADJECTIVES)}_{rng.choice(NOUNS)}"
        if attempt >= 50:
            name = f"{name}{rng.randrange(10, 10_000)}"
        if name not in taken and is_safe_identifier(name):
            taken.add(name)
            return name
    raise RuntimeError("could not draw a fresh identifier in 1000 attempts")
