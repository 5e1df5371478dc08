"""Seeded, plausible names for runtime-target masking: hidden modules, decoys, forwarder locals.

A hidden implementation and its decoys must look alike (``parser_native_engine.py``,
``_staged_dispatch_core.py``), so that only reading the forwarder tells which one runs; so they
share one vocabulary. Every part is drawn from the caller's seeded RNG and the space
is large (three parts, hundreds of thousands of names per module) so that two seeds practically
never share a name; nothing is a fixed marker. A name must not change what an existing name
means: not a file or folder stem anywhere in the tree (case-insensitively, for case-folding
file systems), not an identifier of the package's ``__init__`` or of the module itself
(importing ``pkg._x`` would set attribute ``_x`` on the package), not a standard-library
module, not a keyword, and never a name pytest collects (``test_*``, ``*_test``, ``conftest``).
Words, the forwarder's locals' too, are the project's own where it has enough (mirage/vocabulary.py),
these lists otherwise; a word
that says what the file is (``impl``, ``real``, ...: vocabulary.GIVEAWAYS) is never drawn from either.
"""

from __future__ import annotations

import keyword
import random
import sys

from repoanchor.perturb.mirage.vocabulary import GIVEAWAYS, fitting
from repoanchor.perturb.naming import is_safe_identifier

QUALIFIERS = (
    "active", "adaptive", "async", "base", "basic", "batch", "bound", "buffered", "cached", "checked",
    "classic", "common", "compat", "compiled", "concrete", "core", "current", "default", "deferred",
    "direct", "dispatch", "dynamic", "eager", "early", "embedded", "extended", "fast", "fallback",
    "generic", "guarded", "inline", "internal", "lazy", "legacy", "lean", "linked", "local", "managed",
    "minimal", "native", "nested", "patched", "plain", "portable", "primary", "private", "pure",
    "reference", "resolved", "runtime", "safe", "scoped", "shared", "simple", "stable", "staged",
    "standard", "static", "strict", "structured", "threaded", "typed", "unified", "vendored",
)  # fmt: skip
ROLES = (
    "api", "backend", "base", "bindings", "bridge", "core", "engine", "frontend", "funcs", "glue",
    "handlers", "helpers", "impl", "internals", "kernel", "layer", "logic", "machinery", "methods",
    "model", "ops", "primitives", "routines", "runtime", "shims", "support", "tools", "types",
    "utils", "workers",
)  # fmt: skip
VERBS = (
    "activate", "adopt", "attach", "bind", "bootstrap", "connect", "expose", "hydrate", "install",
    "link", "load", "materialize", "mount", "populate", "prepare", "realize", "resolve", "run",
    "setup", "wire",
)  # fmt: skip
NOUNS = {
    "name": ("name", "module", "target", "unit", "entry", "qualname"),
    "path": ("path", "location", "origin", "source", "file", "filename"),
    "spec": ("spec", "handle", "view", "record", "binding", "descriptor"),
    "loader": ("loader", "reader", "importer", "provider", "fetcher", "opener"),
    "scope": ("scope", "namespace", "globals", "env", "table", "symbols"),
    "shared": ("shared", "reused", "borrowed", "inherited", "kept", "direct"),
    "stream": ("stream", "handle", "reader", "fileobj", "blob", "buffer"),
}
"""Nouns per role of a forwarder variable, so that drawn names still say what they hold."""


def module_name(
    rng: random.Random, stem: str, taken: set[str], avoid: set[str], vocabulary: tuple[str, ...] | None = None
) -> str:
    """Draw a module stem for a decoy of `stem`; claim it in `taken`.

    Two forms in three carry the module's own stem (``_lazy_parser_ops``): a file named after
    the module it sits next to is the most plausible place for its code. With the project's
    `vocabulary` (mirage/vocabulary.py) every other word is the project's own.
    """
    qualifiers, roles = (vocabulary, vocabulary) if vocabulary else (QUALIFIERS, ROLES)
    core = stem.strip("_").lower()
    folded = {name.lower() for name in taken | avoid}
    for attempt in range(1000):
        first, second = rng.sample(qualifiers, 2)
        role = rng.choice(roles)
        form = rng.randrange(3) if core and len(core) <= 16 else 0
        parts = [(first, second, role), (first, core, role), (core, first, role)][form]
        if len(set(parts)) < len(parts) or {first, second, role} & GIVEAWAYS:
            continue  # ``_runtime_util_runtime`` reads as a slip; ``_fast_parser_impl`` says what it is
        name = ("_" if rng.random() < 0.8 else "") + "_".join(parts)
        if attempt >= 500:
            name += f"{rng.randrange(2, 10)}"
        if usable_module(name, folded):
            taken.add(name)
            return name
    raise RuntimeError(f"could not draw a free module name for {stem!r} in 1000 attempts")


def hidden_name(
    rng: random.Random, stem: str, taken: set[str], avoid: set[str], vocabulary: tuple[str, ...] | None = None
) -> str:
    """The hidden implementation's stem: ``<stem>_<qualifier>_<role>`` (``core_native_engine``).

    It starts with the module's own stem so that it sorts right after it, by file name
    (``core.py`` < ``core_native_engine.py``) and by dotted name: a loop that imports every module
    a package lists imports the public module first, so the hidden file, imported again under
    its own name, finds every import cycle already resolved (imported first, a module in a
    cycle could fail where the public one never did).
    """
    base = stem.rstrip("_") or stem
    if base.lower().startswith("test"):  # ``test_native_engine.py`` would be collected by pytest
        base = f"_{base}"
    qualifiers, roles = (vocabulary, vocabulary) if vocabulary else (QUALIFIERS, ROLES)
    folded = {name.lower() for name in taken | avoid}
    own = set(base.split("_"))
    for attempt in range(1000):
        qualifier, role = rng.choice(qualifiers), rng.choice(roles)
        name = f"{base}_{qualifier}_{role}" + (f"{rng.randrange(2, 10)}" if attempt >= 500 else "")
        fits = qualifier != role and not {qualifier, role} & (own | GIVEAWAYS)
        if fits and usable_module(name, folded):
            taken.add(name)
            return name
    raise RuntimeError(f"could not draw a free hidden-module name for {stem!r} in 1000 attempts")


def usable_module(name: str, folded_taken: set[str]) -> bool:
    lowered = name.lower()
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and lowered not in folded_taken
        and name not in sys.stdlib_module_names
        and name not in sys.builtin_module_names
        and not lowered.startswith("test_")  # pytest's default python_files: test_*.py, *_test.py
        and not lowered.endswith("_test")
        and lowered not in {"conftest", "__init__", "__main__", "setup"}
    )


def function_name(rng: random.Random, avoid: set[str], vocabulary: tuple[str, ...] | None = None) -> str:
    """A private helper name such as ``_attach_native_module``; added to `avoid`. With the project's
    `vocabulary`, three of its words, verb and noun among its words that say so where it has enough."""
    nouns = NOUNS["name"] + NOUNS["scope"]
    if vocabulary:
        words = (fitting(vocabulary, VERBS), vocabulary, fitting(vocabulary, nouns))
        return _draw(rng, avoid, lambda: _project_name(rng, words, "_"))
    return _draw(rng, avoid, lambda: f"_{rng.choice(VERBS)}_{rng.choice(QUALIFIERS)}_{rng.choice(nouns)}")


def local_name(rng: random.Random, role: str, avoid: set[str], vocabulary: tuple[str, ...] | None = None) -> str:
    """A parameter or local name for `role` (a key of NOUNS) such as ``staged_native_spec``; added to `avoid`.

    Two qualifiers, not one: a few hundred names per role would recur between seeds. With the project's
    `vocabulary`, its words, the last one among those that say what the name holds where it has enough.
    """
    if vocabulary:
        words = (vocabulary, vocabulary, fitting(vocabulary, NOUNS[role]))
        return _draw(rng, avoid, lambda: _project_name(rng, words, ""))
    return _draw(rng, avoid, lambda: "_".join([*rng.sample(QUALIFIERS, 2), rng.choice(NOUNS[role])]))


def _project_name(rng: random.Random, choices: tuple[tuple[str, ...], ...], prefix: str) -> str:
    """One word from each of `choices`; "" (never free) when a word repeats or reveals the role."""
    parts = [rng.choice(words) for words in choices]
    return "" if len(set(parts)) < len(parts) or set(parts) & GIVEAWAYS else prefix + "_".join(parts)


def _draw(rng: random.Random, avoid: set[str], make) -> str:
    for attempt in range(1000):
        drawn = make()
        name = drawn + (f"{rng.randrange(2, 100)}" if attempt >= 500 and drawn else "")
        if drawn and name not in avoid and is_safe_identifier(name):
            avoid.add(name)
            return name
    raise RuntimeError("could not draw a free identifier in 1000 attempts")
