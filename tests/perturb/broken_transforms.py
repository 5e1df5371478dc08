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


class LeavesCycle(RenameToKeyword):
    """Raises after noting whether the cyclic collector ran during its pass and leaving a reference
    cycle behind (as astroid trees do): the engine must hold the collector off and let it run after."""

    id = "leaves-cycle"
    seen: list = []

    def apply(self, module, sites, ctx):
        import gc
        import weakref

        class Node:
            pass

        node = Node()
        node.self = node
        LeavesCycle.seen.append((gc.isenabled(), weakref.ref(node)))
        raise RuntimeError("cycle left")


class _MultiItemWiths(SiteCollector):
    def visit_With(self, node: cst.With) -> None:
        if len(node.items) > 1 and not isinstance(node.lpar, cst.LeftParen):
            self.add(node)


class ParenthesizeWith(RenameToKeyword):
    """Puts a multi-item ``with`` in parentheses: Python 3.9+ syntax, which 3.8 (its grammar and itself) rejects."""

    id = "parenthesize-with"

    def candidates(self, module, ctx):
        return _MultiItemWiths().collect(module)

    def apply(self, module, sites, ctx):
        def wrap(site, original, updated):
            return updated.with_changes(lpar=cst.LeftParen(), rpar=cst.RightParen())

        return rewrite_sites(module, sites, ctx, wrap)


class Stalls(RenameToKeyword):
    """Takes two minutes to find its sites: a perturbation that is still running when its build gives up on it."""

    id = "stalls"

    def candidates(self, module, ctx):
        import time

        time.sleep(120)
        return super().candidates(module, ctx)
