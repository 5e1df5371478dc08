"""constant-externalization: selected literal constants move to JSON resources loaded at import.

Per selected module: literals are grouped by exact value (`1`, `1.0`, `True` and `'1'` apart),
a share phi of the groups is drawn from the seed, every occurrence of a chosen value becomes
``_binding["key"]``, and one loader statement after the docstring and ``from __future__``
imports binds ``_binding`` to the dict read from a JSON file in the module's own folder. Several
modules of a folder may share a file (a seeded pool per folder), so a resource does not point
at one module. Trivial values (0, 1, -1, "", True/False/None) stay unless the option
``keep_trivial`` is set; the option ``types`` (e.g. ``["int", "float"]``, the RepoMirage code's
numbers-only rule) keeps every other kind of value in place. See `perturb.mirage.constants_*` for
the rules, names and loader.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from pathlib import PurePosixPath
from typing import ClassVar

import libcst as cst

from repoanchor.perturb.mirage.base import ModuleByModule
from repoanchor.perturb.mirage.constants.context import words_of
from repoanchor.perturb.mirage.constants.loader import (
    decode_resource,
    encode_resource,
    insertion_index,
)
from repoanchor.perturb.mirage.constants.names import binding_name
from repoanchor.perturb.mirage.constants.pool import ResourcePool
from repoanchor.perturb.mirage.constants.rewrite import Target, externalize
from repoanchor.perturb.mirage.constants.scan import Scan, scan_module
from repoanchor.perturb.mirage.constants.shadowing import (
    script_shadowing,
    shadowed_loader_modules,
    shadowing,
    stdlib_named,
)
from repoanchor.perturb.naming import identifiers_in
from repoanchor.perturb.source.files import python_files
from repoanchor.perturb.source.jit_compiled import compiled_functions
from repoanchor.perturb.source.line_sensitive import line_reading_functions
from repoanchor.perturb.source.quoted_frames import quoted_functions
from repoanchor.perturb.source.sourcefile import SourceError, decode_source
from repoanchor.perturb.treectx import TreeContext

REASONS = {
    "trivial-value": "0, 1, -1, '' and True/False/None stay (option keep_trivial moves them)",
    "docstring": "docstrings and bare string statements stay in the source",
    "f-string": "literals inside f-strings stay (a quote in a replacement field breaks before 3.12)",
    "match-pattern": "match patterns require literals",
    "annotation": "annotations and type parameters are read statically",
    "bytes": "JSON has no bytes",
    "imaginary": "JSON has no complex numbers",
    "non-finite-float": "strict JSON has no Infinity or NaN",
    "huge-int": "too many digits for every interpreter's int/str conversion limit",
    "identity-comparison": "the value is compared with `is`; values read from JSON are not interned",
    "dunder-target": "dunder assignments (__version__, __all__, __slots__) are parsed by tools",
    "typing-construct": "type checkers read typing constructs statically",
    "translation-string": "xgettext and Babel extract the literal arguments of gettext calls as messages",
    "platform-check": "version and platform checks must stay literal for static analysis",
    "main-guard": "`if __name__ == '__main__'` is matched as text by coverage and linters",
    "finalizer": "__del__ may run after module globals are cleared",
    "jit-compiled": "a JIT compiler cannot type a dict global",
    "quoted-in-test": "a test's expected traceback shows the function's lines as written",
    "before-loader": "code before the loader cannot read the constants",
    "comment-inside": "a comment inside an implicit concatenation would be lost",
}
BUILD_SCRIPTS = {"setup.py", "noxfile.py", "versioneer.py", "conftest.py"}
VERSION_STEMS = {"_version", "__version__", "version", "__about__", "_about", "about"}


class ConstantExternalization(ModuleByModule):
    option_names = frozenset({"keep_trivial", "types"})
    id: ClassVar[str] = "constant-externalization"
    description: ClassVar[str] = "move literal constants to JSON resources loaded at import, under plausible keys"

    def prepare(self, ctx: TreeContext, modules: list[str]) -> tuple[bool, int, ResourcePool]:
        keep_trivial, types = _keep_trivial(ctx.options), _types(ctx.options)
        base = ctx.rng.getrandbits(64)  # per-module RNGs: one module's draws never shift another's
        files = python_files(ctx.root, include_tests=True, include_build=True)[0]
        shadowed = shadowed_loader_modules(files), stdlib_named(files)
        return (keep_trivial, types, shadowed), base, ResourcePool(ctx, base, modules)

    def apply_module(self, ctx: TreeContext, rel: str, state: tuple[tuple, int, ResourcePool]) -> None:
        settings, base, pool = state
        if why := shadowing(rel, *settings[2]):
            ctx.skip(rel, why)
            return
        self._apply_module(ctx, pool, random.Random(f"{base}|{rel}"), rel, settings[:2])

    def _apply_module(self, ctx: TreeContext, pool: ResourcePool, rng: random.Random, rel: str, settings: tuple):
        keep_trivial, types = settings
        parsed = _parse(ctx, rel)
        if parsed is None:
            return
        module, text = parsed
        if link := ctx.linked(rel):
            ctx.skip(rel, f"symlink: {link} links to it; imported through the link, its JSON would be looked for there")
            return
        if read := ctx.read_by_name.get(rel):
            ctx.skip(rel, f"read-by-name: {read}, to read as text, where values moved to JSON would be missing")
            return
        if read := ctx.project.sources_read.get(rel):
            ctx.skip(rel, f"source-read: {read}; its values moved to JSON would show there")
            return
        line_readers = line_reading_functions(module, text)
        if line_readers:  # the loader's lines go above every function: each one's line numbers would move
            name, what = next(iter(line_readers.values()))
            ctx.skip(rel, f"line-sensitive: {name} reads line numbers ({what}); the loader's lines would move them")
            return
        loader_index = insertion_index(module)
        scan = scan_module(module, keep_trivial=keep_trivial, first_allowed=loader_index)
        held = dict.fromkeys(compiled_functions(module, text), "jit-compiled")
        held |= dict.fromkeys(quoted_functions(module, rel, ctx.project.quoted_frames, text), "quoted-in-test")
        _keep_inside(scan, held)
        _report_refusals(ctx, rel, scan)
        if types is not None:  # groups are keyed (type name, repr): other kinds of value stay
            scan.groups = {key: sites for key, sites in scan.groups.items() if key[0] in types}
        if not scan.groups:
            ctx.skip(rel, "no-candidates: no literal constant left to externalize")
            return
        groups = _choose(list(scan.groups.values()), ctx.fraction, rng)
        owner = _owner(rel)
        binding = binding_name(rng, identifiers_in(text) | ctx.taken, owner, ctx.vocabulary)
        ctx.taken.add(binding)
        resource = pool.resource_for(rel)
        with ctx.transaction(rel):
            existing = decode_resource(ctx.read(resource)) if ctx.exists(resource) else {}
            target = Target(binding, PurePosixPath(resource).name, loader_index, tuple(words_of(owner)))
            emission = ctx.modules.emission(rel)
            result = externalize(module, groups, target, rng, set(existing), text, emission)
            ctx.write_module(rel, result.module)
            ctx.write(resource, encode_resource({**existing, **result.entries}))
            for where, before, after in result.sites:
                ctx.site(where, before, after)
            for key, value in result.entries.items():
                ctx.resolve_path(
                    "json_value",
                    rel,
                    resource,
                    key=key,
                    original=repr(value),
                    binding=binding,
                    type=type(value).__name__,
                )


def _keep_trivial(options: dict) -> bool:
    """keep_trivial; an unknown option is a configuration error, not something to ignore."""
    unknown = sorted(set(options) - ConstantExternalization.option_names)
    if unknown:
        known = ", ".join(sorted(ConstantExternalization.option_names))
        raise ValueError(f"constant-externalization: unknown option(s) {', '.join(unknown)}; known: {known}")
    value = options.get("keep_trivial", False)
    if not isinstance(value, bool):
        raise ValueError(f"constant-externalization: option keep_trivial must be true or false, got {value!r}")
    return value


VALUE_TYPES = ("int", "float", "str", "bool", "NoneType")


def _types(options: dict) -> frozenset[str] | None:
    """The kinds of value that may move (None: all of them)."""
    value = options.get("types")
    if value is None:
        return None
    if not isinstance(value, list) or not value or any(item not in VALUE_TYPES for item in value):
        raise ValueError(f"constant-externalization: option types must be a list of {', '.join(VALUE_TYPES)}")
    return frozenset(value)


def _parse(ctx: TreeContext, rel: str) -> tuple[cst.Module, str] | None:
    """The module and its text, or None after recording why it is not transformed."""
    path = PurePosixPath(rel)
    if path.name in BUILD_SCRIPTS or path.stem in VERSION_STEMS:
        ctx.skip(rel, "build-script: packaging tools read or exec this file outside the import system")
        return None
    try:
        data = ctx.read(rel)
        text = decode_source(data)
        module = ctx.parse(rel, data)
    except (PermissionError, OSError) as exc:
        ctx.skip(rel, f"unreadable: {exc}")
        return None
    except SourceError as exc:
        ctx.skip(rel, str(exc))
        return None
    except cst.ParserSyntaxError as exc:
        ctx.skip(rel, f"unparseable: not valid Python 3 ({str(exc).strip().splitlines()[0]})")
        return None
    except RecursionError:
        ctx.skip(rel, "unparseable: nesting too deep for the parser")
        return None
    if path.name == "__init__.py" and ("declare_namespace" in text or "extend_path" in text):
        ctx.skip(rel, "namespace-init: a pkgutil/pkg_resources namespace __init__ must stay verbatim")
        return None
    shadow = script_shadowing(ctx.root, path, text)
    if shadow:
        ctx.skip(
            rel, f"shadowed-stdlib: {shadow} next to it would replace the loader's stdlib import when run as a script"
        )
        return None
    return module, text


def _keep_inside(scan: Scan, held: dict[int, str]) -> None:
    """Literals inside a function of `held` (id -> reason class) stay: one a JIT compiler compiles
    (`source/jit_compiled.py`). (A module with a function that reads its own line numbers is refused whole.)"""
    if not held:
        return
    for key, sites in list(scan.groups.items()):
        reasons = [next((held[id(h)] for h in (*site.path, site.node) if id(h) in held), None) for site in sites]
        scan.refused.extend((reason, site.where) for reason, site in zip(reasons, sites, strict=True) if reason)
        kept = [site for reason, site in zip(reasons, sites, strict=True) if reason is None]
        if kept:
            scan.groups[key] = kept
        else:
            del scan.groups[key]


def _report_refusals(ctx: TreeContext, rel: str, scan: Scan) -> None:
    """One Skipped record per reason class and module, with the count and the first site."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for reason, where in scan.refused:
        by_reason[reason].append(where)
    for reason, wheres in sorted(by_reason.items()):
        ctx.skip(rel, f"{reason}: {len(wheres)} literal(s) kept; {REASONS[reason]}", wheres[0])


def _choose(groups: list[list], fraction: float, rng: random.Random) -> list[list]:
    """A share `fraction` of the value groups (at least one), kept in source order."""
    if fraction >= 1.0:
        return groups
    k = max(1, math.ceil(fraction * len(groups)))
    chosen = set(rng.sample(range(len(groups)), k))
    return [group for i, group in enumerate(groups) if i in chosen]


def _owner(rel: str) -> str:
    """The name a module goes by: its stem, or its package's name for an ``__init__.py``."""
    path = PurePosixPath(rel)
    return path.parent.name if path.name == "__init__.py" and path.parent.name else path.stem
