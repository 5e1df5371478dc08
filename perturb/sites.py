"""Sites are nodes, not coordinates: a candidate holds the very node object to rewrite.

`SiteCollector` is a read-only visitor base that tracks the enclosing scope so that each site
gets a stable, human-readable label such as ``Parser.parse/If#2``, and remembers each site's
ancestors. Run it with `collector.collect(module)` (fast field walk, see `walk.py`); it is also
a `CSTVisitor`, so `MetadataWrapper.visit` works when a transform needs metadata.
`rewrite_sites` then rebuilds only the ancestors of the chosen sites.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst

from repoanchor.perturb.traversal.replace import ancestor_paths, replace_nodes
from repoanchor.perturb.traversal.walk import walk


@dataclass(frozen=True, eq=False)
class Site:
    """A candidate node plus whatever the transform learnt about it while collecting."""

    node: cst.CSTNode
    where: str
    data: dict[str, Any] = field(default_factory=dict)
    path: tuple[cst.CSTNode, ...] = ()
    """Ancestors from the module down to the node's parent (empty if unknown)."""


class SiteCollector(cst.CSTVisitor):
    """Visitor that knows its scope path and labels the sites it adds.

    Subclasses that override visit_/leave_ FunctionDef or ClassDef must call super().
    """

    def __init__(self) -> None:
        super().__init__()
        self.sites: list[Site] = []
        self.scope: list[str] = []
        self.ancestors: list[cst.CSTNode] = []
        self._ordinals: Counter[tuple[str, str]] = Counter()

    def collect(self, module: cst.Module) -> list[Site]:
        walk(self, module, self.ancestors)
        return self.sites

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool | None:
        self.scope.append(node.name.value)
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> bool | None:
        self.scope.append(node.name.value)
        return True

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def label(self, node: cst.CSTNode) -> str:
        scope = ".".join(self.scope) or "<module>"
        kind = type(node).__name__
        self._ordinals[(scope, kind)] += 1
        return f"{scope}/{kind}#{self._ordinals[(scope, kind)]}"

    def add(self, node: cst.CSTNode, **data: Any) -> Site:
        site = Site(node, self.label(node), data, tuple(self.ancestors))
        self.sites.append(site)
        return site


SiteRewrite = Callable[[Site, cst.CSTNode, cst.CSTNode], "cst.CSTNode | cst.FlattenSentinel | None"]


def site_paths(module: cst.Module, sites: Sequence[Site]) -> list[tuple[cst.CSTNode, ...]]:
    """Each site's ancestors: as its collector recorded them, or found in `module` where one has none."""
    paths = [site.path for site in sites]
    if all(paths):
        return paths
    found = ancestor_paths(module, [site.node for site in sites])
    return [found[id(site.node)] for site in sites]


def refuse_inside(sites: list[Site], module: cst.Module, found: dict[int, str], ctx: Any) -> list[Site]:
    """`sites` less those inside a node of `found` (id(node) -> why its insides are left alone), or at one; each
    refused with `ctx.skip(why)`."""
    if not found or not sites:
        return sites
    kept = []
    for site, path in zip(sites, site_paths(module, sites), strict=True):
        why = next((found[id(holder)] for holder in (*path, site.node) if id(holder) in found), None)
        if why is None:
            kept.append(site)
        else:
            ctx.skip(why, site)
    return kept


def rewrite_sites(module: cst.Module, sites: Sequence[Site], ctx: Any, rewrite: SiteRewrite) -> cst.Module:
    """Replace each site by `rewrite(site, original, updated)`; None refuses (module unchanged there).

    `updated` is the site with its inner sites already rewritten. Every replacement is recorded
    with `ctx.changed`. Only ancestors of the sites are rebuilt.
    """
    paths = site_paths(module, sites)

    def make(site: Site):
        def apply(original: cst.CSTNode, updated: cst.CSTNode):
            new = rewrite(site, original, updated)
            if new is None:
                return updated
            ctx.changed(site, original, new)
            return new

        return apply

    return replace_nodes(module, {id(s.node): make(s) for s in sites}, paths)


class SiteTransform:
    """The shape most SPTs share: a collector finds a file's sites, one callback rewrites each.

    A subclass names its `id` and `description`, sets `collector` (called with the file's context; its
    `collect(module)` returns the sites) and `rewrite` (a `SiteRewrite`), or overrides `rewriter` when the
    callback holds state for one file (the context's RNG, the names the file already uses)."""

    family: ClassVar[str] = "spt"
    keyword_bound: ClassVar[bool] = False
    moves_lines: ClassVar[bool] = True
    """Whether a rewrite may move lines (a wrap, an insertion): then a function that reads its own line numbers is
    left alone (`source/line_sensitive.py`)."""
    changes_locals: ClassVar[bool] = False
    """Whether a rewrite adds or renames a function's locals: then a project whose tests read code objects' local
    names is refused (`source/code_locals.py`)."""
    nests: ClassVar[bool] = False
    """Whether a rewrite may put statements inside one more block (a wrap, a nested ``if``, a loop inside a loop):
    then no scope of its output may nest more blocks than `nesting.MAX_NESTED` (`engine`)."""
    collector: ClassVar[Callable[[Any], SiteCollector]]
    rewrite: ClassVar[SiteRewrite]

    def candidates(self, module: cst.Module, ctx: Any) -> list[Site]:
        return self.collector(ctx).collect(module)

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: Any) -> cst.Module:
        return rewrite_sites(module, sites, ctx, self.rewriter(module, ctx))

    def rewriter(self, module: cst.Module, ctx: Any) -> SiteRewrite:
        return self.rewrite
