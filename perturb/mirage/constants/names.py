"""Seeded, plausible names for externalized constants: JSON keys, the dict binding, resource files.

Keys are built from the literal's context (`constants_context`) plus a suffix drawn from the
seed, so ``timeout`` may become ``timeout``, ``timeout_default`` or ``default_timeout``; no
fixed prefix or counter marks them. A key never collides with another key of the same file.
The dict binding and the file stem combine words of the module or folder with the project's own words
(mirage/vocabulary.py; a role-revealing word never) or, for a project with too few, small config-like
vocabularies; they never collide with anything in the tree.
"""

from __future__ import annotations

import random
import re
import sys

from repoanchor.perturb.mirage.constants.context import string_words, words_of
from repoanchor.perturb.mirage.vocabulary import GIVEAWAYS, fitting
from repoanchor.perturb.naming import is_safe_identifier

ROLE_SUFFIXES = {
    "keyword": ("", "", "default", "value", "setting"),
    "default": ("default", "default", "", "fallback", "initial"),
    "assign": ("", "", "value", "default", "setting"),
    "step": ("step", "increment", "delta"),
    "field": ("", "value", "entry", "default"),
    "dict-key": ("key", "field", "name"),
    "index": ("index", "pos", "offset"),
    "compare-max": ("limit", "max", "threshold", "cap"),
    "compare-min": ("min", "floor", "minimum"),
    "compare-in": ("choices", "options", "chars"),
    "operand-scale": ("factor", "scale", "multiplier"),
    "operand-divisor": ("divisor", "scale", "unit"),
    "operand-offset": ("offset", "delta", "step"),
    "operand-text:left": ("prefix", "head", "text"),
    "operand-text:right": ("suffix", "tail", "text"),
    "compare-eq": ("value", "expected", "code"),
    "argument:rest": ("default", "fallback", "value"),
    "operand-modulo": ("modulus", "period"),
    "operand-exponent": ("exponent", "power"),
    "operand-shift": ("shift", "bits"),
    "operand-mask": ("mask", "flags", "bits"),
    "return": ("result", "default", "value"),
}
PREFIXABLE = {"default", "max", "min", "initial", "fallback"}
RECEIVER_SUFFIXES = {
    "join": ("sep", "separator", "joiner", "delimiter"),
    "format": ("template", "fmt", "format"),
    "split": ("sep", "delimiter"),
    "startswith": ("prefix", "marker"),
    "endswith": ("suffix", "ext"),
}
ARGUMENT_SUFFIXES = {
    "getattr": ("attr", "attribute", "name"),
    "hasattr": ("attr", "attribute", "name"),
    "setattr": ("attr", "attribute", "name"),
    "get": ("key", "name", "field"),
    "getenv": ("env", "var", "env_var"),
    "pop": ("key", "name"),
    "setdefault": ("key", "name"),
}
KNOWN_STRINGS = {
    "\n": "newline",
    "\t": "tab",
    " ": "space",
    ",": "comma",
    ".": "dot",
    "/": "slash",
    ":": "colon",
    "utf-8": "encoding",
    "utf8": "encoding",
    "ascii": "encoding",
    "r": "mode",
    "w": "mode",
    "rb": "mode",
    "wb": "mode",
    "a": "mode",
}
_CLEAN = re.compile(r"[^a-z0-9]+")
BINDING_ADJECTIVES = (
    "builtin", "static", "shared", "local", "packaged", "bundled", "stock", "base", "core", "common",
    "initial", "fallback", "module", "default", "standard", "preset", "loaded", "global", "known",
    "runtime", "frozen", "canonical", "baseline", "fixed", "reference", "factory", "internal", "site",
    "startup", "boot", "primary", "main", "vendor", "legacy", "compiled", "cached", "declared", "tuned",
)  # fmt: skip
BINDING_NOUNS = (
    "defaults", "settings", "constants", "presets", "params", "options", "tuning", "limits", "table",
    "values", "config", "profile", "catalog", "spec", "knobs", "fixtures", "registry", "data", "manifest",
    "parameters", "bounds", "choices", "conventions", "lookup", "map", "properties", "resources", "schema",
    "store", "strings", "texts", "thresholds", "vocab", "presets_map", "entries", "index",
)  # fmt: skip


def kind_suffixes(value: object, role: str, context: list[str]) -> tuple[str, ...]:
    """Suffixes fitting the value and its role; call roles look at the function or method name."""
    role, _, side = role.partition(":")
    if role == "receiver" and context and context[-1] in RECEIVER_SUFFIXES:
        return RECEIVER_SUFFIXES[context[-1]]
    if role == "argument" and context and context[-1] in ARGUMENT_SUFFIXES:
        return ARGUMENT_SUFFIXES[context[-1]] if not side else ROLE_SUFFIXES["argument:rest"]
    if role == "operand-offset" and isinstance(value, str):
        return ROLE_SUFFIXES[f"operand-text:{side or 'right'}"]
    if role == "compare-eq" and isinstance(value, str):
        return _string_kinds(value)
    if role in ROLE_SUFFIXES:
        return ROLE_SUFFIXES[role]
    if isinstance(value, bool):
        return ("enabled", "flag", "strict")
    if value is None:
        return ("fallback", "placeholder", "default")
    if isinstance(value, int):
        return ("limit", "size", "count", "width", "code", "number")
    if isinstance(value, float):
        return ("ratio", "factor", "scale", "tolerance", "rate", "weight")
    return _string_kinds(value)


def _string_kinds(text: str) -> tuple[str, ...]:
    if text in KNOWN_STRINGS:
        return (KNOWN_STRINGS[text],)
    if len(text) <= 3 and not any(ch.isalnum() for ch in text):
        return ("sep", "delimiter", "separator")
    if "%" in text or ("{" in text and "}" in text):
        return ("fmt", "template", "format")
    if any(ch in text for ch in "\\^$[]") and not text.isspace():
        return ("pattern", "regex", "expr")
    if " " in text.strip():
        return ("message", "text", "msg", "label")
    if text.replace("_", "").replace("-", "").isalnum():
        return ("name", "key", "label", "tag", "kind")
    return ("value", "text", "token")


def compose_key(rng: random.Random, value: object, words: list[str], role: str, scope: list[str]) -> str:
    """One draw of a key for a literal: context words, then a seeded suffix (or prefix)."""
    suffix = rng.choice(kind_suffixes(value, role, words))
    base = list(words)
    if role.partition(":")[0] in {"value", "argument", "receiver"}:
        base = string_words(value)[:2] or ([] if role == "receiver" else base)
    if not base or rng.random() < 0.2:
        base = scope[-1:] + base
    if not base and not suffix:
        suffix = rng.choice(kind_suffixes(value, "value", []))
    parts = [suffix, *base] if suffix in PREFIXABLE and rng.random() < 0.4 else [*base, suffix]
    return clean_key(parts)


def clean_key(parts: list[str]) -> str:
    text = _CLEAN.sub("_", "_".join(p for p in parts if p).lower()).strip("_")
    words = [w for w in text.split("_") if w][:4]
    key = "_".join(dict.fromkeys(words))  # "count_count" reads as a slip
    if not key or key[0].isdigit():
        key = f"value_{key}".strip("_")
    return key


def fresh_key(rng: random.Random, value: object, words: list[str], role: str, scope: list[str], taken: set) -> str:
    """A key unused in `taken` (claimed): a few seeded redraws, then a numbered variant."""
    first = compose_key(rng, value, words, role, scope)
    for attempt in range(8):
        key = first if attempt == 0 else compose_key(rng, value, words, role, scope)
        if key not in taken:
            taken.add(key)
            return key
    for number in range(2, 10_000):
        key = f"{first}_{number}"
        if key not in taken:
            taken.add(key)
            return key
    raise RuntimeError("could not draw a fresh JSON key")


def binding_name(rng: random.Random, taken: set[str], owner: str, vocabulary: tuple[str, ...] | None = None) -> str:
    """The one module-level name the loader binds: private, free in `taken`; config-like, or made of the
    project's `vocabulary` (mirage/vocabulary.py) where it has one."""
    owner_words = [w for w in words_of(owner) if w.isalpha()][:1]
    adjectives, nouns = _words(vocabulary)
    for _ in range(500):
        parts = [*_lead(rng, owner_words, adjectives), rng.choice(nouns)]
        name = "_" + "_".join(parts)
        name = name.upper() if rng.random() < 0.5 else name
        if _fits(parts, vocabulary) and name not in taken and is_safe_identifier(name):
            taken.add(name)
            return name
    raise RuntimeError("could not draw a fresh binding name")


def resource_stem(rng: random.Random, taken: set[str], folder: str, vocabulary: tuple[str, ...] | None = None) -> str:
    """A JSON file stem for a folder: ``_core_settings``, ``click_presets`` (``_curry_merge_sorted`` from the
    project's `vocabulary`); never a taken stem, case-insensitively, a standard-library module or a keyword."""
    folder_words = [w for w in words_of(folder) if w.isalpha()][:1]
    adjectives, nouns = _words(vocabulary)
    folded = {name.lower() for name in taken}
    for _ in range(500):
        prefix = "_" if rng.random() < 0.4 else ""
        parts = [*_lead(rng, folder_words, adjectives), rng.choice(nouns)]
        stem = prefix + "_".join(parts)
        if _fits(parts, vocabulary) and stem.lower() not in folded and stem.lstrip("_").lower() not in folded:
            if stem not in sys.stdlib_module_names and stem not in sys.builtin_module_names:
                taken.add(stem)
                return stem
    raise RuntimeError("could not draw a fresh resource name")


def _words(vocabulary: tuple[str, ...] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Adjectives and nouns: the project's words (nouns among those that say 'settings' where it has enough)."""
    return (vocabulary, fitting(vocabulary, BINDING_NOUNS)) if vocabulary else (BINDING_ADJECTIVES, BINDING_NOUNS)


def _fits(parts: list[str], vocabulary: tuple[str, ...] | None) -> bool:
    """No word twice (``_merge_merge_sorted`` reads as a slip) and none revealing the role; the generic
    lists hold no such words, so their names stay as they were."""
    return not vocabulary or (len(set(parts)) == len(parts) and not set(parts) & GIVEAWAYS)


def _lead(rng: random.Random, owner_words: list[str], adjectives: tuple[str, ...]) -> list[str]:
    """Words before the noun: an adjective, then sometimes the owner's name (``_core_parser_spec``).

    Always an adjective: with the owner's name alone, two seeds would often pick the same name."""
    adjective = rng.choice(adjectives)
    return [adjective, *owner_words] if owner_words and rng.random() < 0.5 else [adjective]
