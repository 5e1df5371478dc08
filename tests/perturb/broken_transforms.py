"""Deliberately faulty transformations, loaded by dotted path, to prove the engine's guards."""

from __future__ import annotations

import libcst as cst

from repoanchor.perturb.sites import SiteCollector, rewrite_sites


class _Names(SiteCollector):
    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "a":
            self.add(node)


class RenameToKeyword:
    """Renames `a` to `class`: LibCST accepts it, Python does not."""

    id = "rename-to-keyword"
    family = "test"
    description = "broken on purpose"
    keyword_bound = False

    def candidates(self, module, ctx):
        return _Names().collect(module)

    def apply(self, module, sites, ctx):
        return rewrite_sites(module, sites, ctx, lambda site, original, updated: updated.with_changes(value="class"))


class Crashes(RenameToKeyword):
    id = "crashes"

    def apply(self, module, sites, ctx):
        raise RuntimeError("boom")


class Silent(RenameToKeyword):
    """Changes code without reporting a site: the engine must not trust it."""

    id = "silent"

    def apply(self, module, sites, ctx):
        return module.with_changes(body=[*module.body, cst.SimpleStatementLine([cst.Pass()])])
