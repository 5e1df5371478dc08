"""Seeded, plausible names for proxy modules (``_lazy_compat_loaders.py``, ``_io_type_bindings.py``).

The names must not betray the transformation: there is no shared prefix or marker, every part
comes from the caller's seeded RNG, and the space is large (three parts, about 9 million names) so
that two seeds practically never draw the same name. A name must also never *change* what an
existing name means: it may not be a file or folder stem anywhere in the tree (`taken`), an
identifier of the package's ``__init__`` (importing ``pkg._x`` sets the attribute ``_x`` on the
package, which would clobber a global of that name), a standard-library module (a top-level
proxy would shadow it) or a keyword. Words are the project's own where it has enough
(mirage/vocabulary.py), these lists otherwise; a word that says what the file is (``impl``, ``real``,
...: vocabulary.GIVEAWAYS) is never drawn from either.
"""

from __future__ import annotations

import keyword
import random
import sys

from repoanchor.perturb.mirage.vocabulary import GIVEAWAYS

QUALIFIERS = (
    "api", "async", "attr", "audit", "auth", "base", "batch", "bind", "bit", "block", "boot", "bound", "buffer",
    "build", "bulk", "byte", "cache", "call", "callback", "canon", "cast", "cell", "chain", "char", "check", "child",
    "class", "clean", "cli", "clock", "close", "codec", "col", "color", "column", "command", "common", "compat",
    "compile", "compose", "config", "conn", "console", "const", "context", "control", "convert", "cookie", "copy",
    "core", "count", "cursor", "data", "date", "debug", "decode", "deep", "default", "deferred", "delta", "depth",
    "diff", "digest", "dir", "dispatch", "doc", "draft", "dump", "dynamic", "early", "edge", "edit", "emit",
    "encode", "engine", "entry", "enum", "env", "error", "eval", "event", "exec", "exit", "export", "expr", "extra",
    "fast", "feed", "fetch", "field", "file", "fill", "filter", "final", "flag", "flat", "flow", "flush", "fold",
    "font", "form", "format", "frame", "func", "future", "gen", "generic", "get", "global", "grid", "group", "guard",
    "handle", "hash", "head", "heap", "help", "hint", "hook", "host", "html", "http", "id", "impl", "index", "info",
    "init", "inline", "inner", "input", "inspect", "internal", "io", "item", "iter", "job", "join", "json", "key",
    "kind", "label", "last", "layout", "lazy", "leaf", "legacy", "level", "lib", "limit", "line", "link", "list",
    "live", "load", "local", "lock", "log", "lookup", "loop", "low", "main", "map", "mark", "match", "math", "max",
    "memo", "merge", "meta", "method", "mime", "min", "mode", "model", "module", "multi", "name", "native", "net",
    "new", "node", "norm", "null", "num", "object", "offset", "op", "option", "order", "out", "outer", "output",
    "owner", "pack", "page", "pair", "param", "parse", "part", "patch", "path", "peer", "pipe", "plain", "platform",
    "plugin", "point", "pool", "port", "post", "pre", "prefix", "prep", "print", "private", "probe", "proc",
    "prompt", "proto", "public", "pull", "push", "query", "queue", "quote", "range", "raw", "read", "ready", "real",
    "record", "ref", "regex", "remote", "render", "repr", "request", "reset", "resolve", "result", "retry", "root",
    "route", "row", "rule", "run", "runtime", "safe", "scan", "schema", "scope", "score", "seal", "search", "select",
    "send", "seq", "serial", "session", "set", "shape", "share", "shared", "shell", "short", "signal", "simple",
    "size", "slot", "snap", "sort", "source", "span", "spec", "split", "stack", "stage", "start", "stat", "state",
    "static", "status", "step", "store", "stream", "strict", "string", "struct", "style", "sub", "sync", "syntax",
    "table", "tag", "task", "temp", "term", "test", "text", "thread", "tick", "time", "token", "tool", "trace",
    "track", "tree", "trim", "tuple", "type", "unit", "url", "user", "util", "valid", "value", "var", "vector",
    "version", "view", "walk", "warn", "watch", "web", "word", "work", "wrap", "write",
)  # fmt: skip
NOUNS = (
    "access", "accessors", "adapters", "aliases", "api", "backend", "backends", "base", "bindings", "bridge",
    "builders", "cache", "catalog", "checks", "codecs", "compat", "config", "consts", "converters", "core",
    "defaults", "defs", "deps", "dispatch", "entries", "errors", "exports", "ext", "facade", "factories",
    "fallbacks", "forwards", "funcs", "glue", "handlers", "helpers", "hooks", "impl", "imports", "index",
    "internals", "kit", "layer", "lib", "links", "loader", "loaders", "lookup", "mapping", "maps", "mixins",
    "modules", "names", "objects", "ops", "parts", "plumbing", "policy", "proto", "providers", "readers", "refs",
    "registry", "resolvers", "routes", "rules", "runtime", "schemes", "shims", "sources", "spec", "specs", "state",
    "stubs", "support", "table", "tables", "tools", "types", "units", "utils", "views", "wiring", "wrappers",
    "writers",
)  # fmt: skip


def module_name(
    rng: random.Random, taken: set[str], avoid: set[str] = frozenset(), vocabulary: tuple[str, ...] | None = None
) -> str:
    """Draw ``_<qualifier>_<qualifier>_<noun>`` until it is free, then claim it in `taken`. With the
    project's `vocabulary` (mirage/vocabulary.py), all three words are the project's own."""
    qualifiers, nouns = (vocabulary, vocabulary) if vocabulary else (QUALIFIERS, NOUNS)
    for _ in range(1000):
        first, second = rng.sample(qualifiers, 2)
        noun = rng.choice(nouns)
        name = f"_{first}_{second}_{noun}"
        if (vocabulary and noun in (first, second)) or {first, second, noun} & GIVEAWAYS:
            continue  # ``_merge_sorted_merge`` reads as a slip; ``_real_io_impl`` says what it is
        if usable(name, taken, avoid):
            taken.add(name)
            return name
    raise RuntimeError("could not draw a fresh proxy module name in 1000 attempts")


def usable(name: str, taken: set[str], avoid: set[str] = frozenset()) -> bool:
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and name not in taken
        and name not in avoid
        and name not in sys.stdlib_module_names
        and name not in sys.builtin_module_names
    )


def parameter_name(rng: random.Random, avoid: set[str]) -> str:
    """The parameter of a proxy's ``__getattr__``: a conventional spelling none of its names shadow."""
    choices = [name for name in ("name", "attr", "key", "attribute", "item", "member") if name not in avoid]
    if choices:
        return rng.choice(choices)
    for _ in range(1000):
        name = f"{rng.choice(QUALIFIERS)}_{rng.choice(('name', 'attr', 'key'))}"
        if name not in avoid and not keyword.iskeyword(name):
            return name
    raise RuntimeError("could not draw a __getattr__ parameter name")
