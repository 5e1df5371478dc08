"""Decoys: copies of a module's implementation that read like it but behave differently.

A decoy is the module's own code (docstrings, comments and layout kept: a decoy that lost them
would stand out, and the prior tool's docstring stripping left classes whose body was only a
docstring empty, hence unparseable) with one to three kinds of seeded mutations:

- ``invert-if``: the test of an ``if``/``elif`` becomes ``not (test)``; ``if __name__ ==
  "__main__"`` and ``if TYPE_CHECKING`` guards are left alone (here and below): their inversion
  reads as a bug;
- ``swap-imports``: two module-level import bindings trade their local names, so each name
  now refers to the other import (``from .a import x as y`` / ``from .b import y as x``);
- ``drop-function``: a module-level function or a method disappears, but never the last
  statement of its block (an empty block does not parse);
- secondary kinds, added for variety (a decoy always gets a primary kind when the module has
  one): ``flip-compare`` turns ``==`` into ``!=``, ``<`` into ``>=``, ``is`` into ``is not``...;
  ``flip-constant`` turns an integer ``n`` into ``n + 1`` or swaps ``True``/``False``.

Each decoy lists the mutations it got, by kind and site label, and differs from the
implementation and from every other decoy by text. A module that cannot yield the requested
number of distinct decoys gets fewer, and the caller reports the shortfall. Sites are collected
once per module with the fast walker; each decoy only rebuilds the ancestors of its mutations
and emits only the statements they made anew, at any depth (`FileEmission`: a mutation deep in a
large class no longer re-emits the whole class). The rewrites themselves are in
`perturb.mirage.masking_mutations`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import libcst as cst

from repoanchor.perturb.bindings import dotted_name
from repoanchor.perturb.mirage.masking.mutations import choose
from repoanchor.perturb.sites import Site, SiteCollector
from repoanchor.perturb.speed.emission import FileEmission
from repoanchor.perturb.traversal.replace import replace_nodes
from repoanchor.perturb.traversal.walk import children

PRIMARY = ("invert-if", "swap-imports", "drop-function")
SECONDARY = ("flip-compare", "flip-constant")
ATTEMPTS = 8


@dataclass(frozen=True)
class Decoy:
    source: bytes
    mutations: tuple[str, ...]


class _Sites(SiteCollector):
    """Candidate nodes of each mutation kind, with their ancestors."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, list[Site]] = {kind: [] for kind in (*PRIMARY, *SECONDARY)}

    def visit_If(self, node: cst.If) -> None:
        if not _is_guard(node.test):
            self.found["invert-if"].append(self.add(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        parent = self.ancestors[-1] if self.ancestors else None
        in_class = len(self.ancestors) >= 2 and isinstance(self.ancestors[-2], cst.ClassDef)
        if isinstance(parent, cst.Module) or (isinstance(parent, cst.IndentedBlock) and in_class):
            scope = ".".join([*self.scope, node.name.value])
            self.found["drop-function"].append(Site(node, scope, {"block": parent}, tuple(self.ancestors)))
        return super().visit_FunctionDef(node)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        statement = self.ancestors[-1]
        if len(self.ancestors) != 3 or not isinstance(self.ancestors[0], cst.Module):
            return  # module level only: Module > SimpleStatementLine > Import(From) > alias
        if isinstance(statement, cst.ImportFrom) and statement.module and dotted_name(statement.module) == "__future__":
            return
        name = dotted_name(node.name) or ""
        local = node.asname.name.value if node.asname else name.split(".")[0]
        if isinstance(statement, cst.ImportFrom):
            local = node.asname.name.value if node.asname else name
        self.found["swap-imports"].append(self.add(node, name=name, local=local))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and not _is_guard(node):
            self.found["flip-compare"].append(self.add(node))

    def visit_Integer(self, node: cst.Integer) -> None:
        if node.value.isdigit():
            self.found["flip-constant"].append(self.add(node))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in ("True", "False"):
            self.found["flip-constant"].append(self.add(node))


def _is_guard(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` and ``TYPE_CHECKING`` tests: their inversion reads as a bug.

    A walk over the test's nodes, not a codegen: modules have thousands of comparisons.
    """
    stack = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value in _GUARD_NAMES:
            return True
        stack.extend(children(node))
    return False


_GUARD_NAMES = frozenset({"__name__", "TYPE_CHECKING"})


def make_decoys(module: cst.Module, code: str, rng: random.Random, count: int) -> tuple[list[Decoy], str | None]:
    """Up to `count` distinct decoys of `module` (whose text is `code`: LibCST round-trips it
    exactly, so no codegen is spent on it), and why there are fewer (None when all were made).

    Every decoy gets at least one of the primary kinds when the module has any; the secondary
    kinds add variety, so that small modules still yield several distinct decoys.
    """
    collector = _Sites()
    collector.collect(module)
    found = collector.found
    primary = [kind for kind in PRIMARY if _usable(kind, found[kind])]
    kinds = primary + [kind for kind in SECONDARY if found[kind]]
    if not kinds:
        return [], (f"0 of {count}: no if-statement, import pair, function, comparison or constant" if count else None)
    emission = FileEmission()
    emission.code(module)  # every statement kept: a decoy emits only the statements its mutations made anew
    decoys, seen = [], {code}
    for _ in range(count * ATTEMPTS):
        if len(decoys) == count:
            break
        chosen = rng.sample(kinds, rng.randint(1, min(3, len(kinds))))
        if primary and not set(chosen) & set(primary):
            chosen.append(rng.choice(primary))
        rewrites, paths, labels = _plan(chosen, found, rng)
        mutated = emission.code(replace_nodes(module, rewrites, paths), keep=False)
        if mutated not in seen:
            seen.add(mutated)
            decoys.append(Decoy(mutated.encode(module.encoding), tuple(labels)))
    if len(decoys) < count:
        return decoys, f"{len(decoys)} of {count}: only {len(decoys)} distinct mutations in {count * ATTEMPTS} draws"
    return decoys, None


def _usable(kind: str, sites: list[Site]) -> bool:
    if kind == "swap-imports":
        return len({site.data["local"] for site in sites}) >= 2
    return bool(sites)


def _plan(kinds: list[str], found: dict[str, list[Site]], rng: random.Random):
    """Rewrites (by node id), ancestor paths and labels for one decoy; drops are chosen first."""
    rewrites, paths, labels = {}, [], []
    dropped: set[int] = set()
    for kind in sorted(kinds, key=lambda k: k != "drop-function"):
        sites = [s for s in found[kind] if not any(id(a) in dropped for a in s.path)]
        for site, rewrite, label in choose(kind, sites, rng):
            rewrites[id(site.node)] = rewrite
            paths.append(site.path)
            if label is not None:  # a swap rewrites two aliases but is one mutation
                labels.append(f"{kind} {label}")
            if kind == "drop-function":
                dropped.add(id(site.node))
    return rewrites, paths, labels
