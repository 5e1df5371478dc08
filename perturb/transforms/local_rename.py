"""local-rename: a function-local variable gets a fresh, plausible name everywhere it is used.

A name bound by plain targets inside a ``def`` (``=``, ``+=``, annotated assignment, walrus,
``for``/``with``/``except`` targets) is renamed at every binding and every read, including
``del``, match captures of the same name, and reads from nested functions, lambdas,
comprehensions and class bodies (closures). `speed.function_names` supplies each function's
bindings and the Names spelling them, under Python's scoping rules, in one walk of the module (a
name bound only by match captures is left alone, as the earlier LibCST scope analysis did).
Refused, with the reason class in brackets:

- [parameter] callers may pass it by keyword, and ``inspect.signature`` shows it;
- [global/nonlocal] it is declared ``global`` or ``nonlocal`` anywhere in the module, so the
  binding lives in, or is shared with, another scope (checked module-wide: simple and safe);
- [rebound in nested scope] a nested scope binds the same name (nested def, lambda or
  comprehension variable, class attribute, match capture, walrus inside a comprehension): which
  binding an occurrence means then depends on evaluation order (a class body's ``y = y`` reads
  the global, not the closure);
- [binding kind] it is bound by an import, ``def`` or ``class``: renaming would change an
  import statement or an object's ``__name__``;
- [introspection] the function, or anything nested in it, calls ``locals()``, ``vars()``,
  ``eval``, ``exec``, ``dir()`` or inspects frames: those observe names as strings;
- [self-documenting f-string] it appears in ``{x=}``, whose output contains the name's text;
- [named in a string] a string of the function holds ``@x`` or is an expression reading ``x``: pandas'
  ``query``/``eval`` and numexpr find locals by name through the caller's frame (`source/named_in_strings.py`);
- [frame local read by name] a test reads a frame's local so named (``tb_frame.f_locals["total"]``; every local
  where no literal names it: `source/code_locals.py`);
- [string annotation] a string a type checker reads as code (an annotation, a ``typing``
  subscript, ``cast``/``TypeVar``/``NewType``) contains the word (the string would need rewriting);
- [private name] it starts with ``__`` (class-private mangling);
- [builtin name] it shadows a builtin: kept out, as the prior art did, to leave deliberate
  shadowing alone.

The new name comes from ``naming.fresh_name`` against every identifier in the file, so it can
neither shadow nor be shadowed by anything.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from functools import partial

import libcst as cst

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.naming import fresh_name, identifiers_in
from repoanchor.perturb.sites import Site, SiteCollector
from repoanchor.perturb.source.code_locals import ANY_LOCAL
from repoanchor.perturb.source.named_in_strings import string_naming
from repoanchor.perturb.speed.function_names import Binding, ModuleNames, NameScope, function_names
from repoanchor.perturb.traversal.replace import ancestor_paths, replace_nodes

BUILTIN_NAMES = frozenset(dir(builtins))


class _Collector(SiteCollector):
    """Every function's renameable locals, from one walk of the module (`function_names`)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def collect(self, module: cst.Module) -> list[Site]:
        names = function_names(module)
        for function in names.functions:  # in the order a visitor enters them: labels count in that order
            self.scope = list(function.path)
            self._collect(function, names)
        return self.sites

    def _collect(self, function: NameScope, names: ModuleNames) -> None:
        # A name the function declares global/nonlocal is bound elsewhere; one bound only by match
        # captures is left alone (the prior scope analysis did not see it).
        bound = {
            name: sorted((b for b in found if b.kind != "capture"), key=lambda b: b.order)
            for name, found in function.bindings.items()
            if name not in function.declared
        }
        ordered = sorted((name for name in bound if bound[name]), key=lambda name: (bound[name][0].order, name))
        if not ordered:
            return
        if function.introspection:
            self.ctx.skip(f"introspection: {function.introspection} can observe local names", self.label(function.node))
            return
        scopes = [function, *function.inner()]
        for name in ordered:
            bindings = bound[name]
            reason = self._refusal(name, bindings, scopes, names)
            if reason:
                self.ctx.skip(reason, self.label(bindings[0].node))
            else:
                targets = {id(n): n for scope in scopes for n in scope.occurrences.get(name, ())}
                self.add(bindings[0].node, targets=tuple(targets.values()))

    def _refusal(self, name: str, bindings: list[Binding], scopes: list[NameScope], names: ModuleNames) -> str | None:
        kinds = {b.kind for b in bindings if b.kind != "Name"}
        if name in names.declared:
            return f"global/nonlocal: {name} is declared global or nonlocal in this module"
        if name.startswith("__"):
            return f"private name: {name} would be mangled inside classes"
        if name in BUILTIN_NAMES:
            return f"builtin name: {name} shadows a builtin"
        if "Param" in kinds:
            return f"parameter: {name} can be passed by keyword"
        if kinds:
            return f"binding kind: {name} is bound by {', '.join(sorted(kinds))}"
        if any(name in scope.bindings for scope in scopes[1:]):
            return f"rebound in nested scope: {name}"
        if any(name in scope.hinted for scope in scopes):
            return f"string annotation: a string annotation refers to {name}"
        if any(id(n) in names.self_documenting for scope in scopes for n in scope.occurrences.get(name, ())):
            return f"self-documenting f-string: {{{name}=}} prints the name"
        if string := string_naming(name, scopes):
            return f"named in a string: {string} may be evaluated against the function's locals"
        if read := self.ctx.project.locals_named.get(name, self.ctx.project.locals_named.get(ANY_LOCAL)):
            return f"frame local read by name: {read}"
        return None


def _rename(new_name: str, site: Site | None, ctx: FileContext, original: cst.Name, updated: cst.Name) -> cst.Name:
    renamed = updated.with_changes(value=new_name)
    if site is not None:
        ctx.changed(site, original, renamed)
    return renamed


class LocalRename:
    id = "local-rename"
    changes_locals = True  # a local gets a new name: a code object's co_varnames shows it
    moves_lines = False  # every line stays where it was: line-reading code sees no change
    family = "spt"
    description = "Rename a function-local variable consistently, closures included, to a fresh name."
    keyword_bound = False

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        return _Collector(ctx).collect(module)

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: FileContext) -> cst.Module:
        taken, rewrites = identifiers_in(ctx.code), {}
        for site in sites:
            new_name = fresh_name(ctx.rng, taken, avoid=ctx.project.absent_words)
            for target in site.data["targets"]:
                rewrites[id(target)] = partial(_rename, new_name, site if target is site.node else None, ctx)
        targets = [target for site in sites for target in site.data["targets"]]
        return replace_nodes(module, rewrites, ancestor_paths(module, targets).values())
