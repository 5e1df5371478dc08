"""The shell two RepoMirage tree transforms share: modules rewritten one at a time, each on a big stack."""

from __future__ import annotations

import traceback
from typing import Any, ClassVar

from repoanchor.perturb.results import Failed
from repoanchor.perturb.speed.bigstack import run_with_big_stack
from repoanchor.perturb.treectx import TreeContext


class ModuleByModule:
    """A tree transform that rewrites its modules one after another. Each runs on a big stack (LibCST recurses
    deeply on real code, see perturb.engine); a crash outside a module's transaction is recorded as Failed for
    that module and the tree goes on. A subclass names `id` and `description`, draws what the whole tree shares
    in `prepare` (options are read, and refused, before any draw) and rewrites one module in `apply_module`."""

    id: ClassVar[str]
    family: ClassVar[str] = "repomirage"
    keyword_bound: ClassVar[bool] = False
    scope: ClassVar[str] = "tree"

    def apply_tree(self, ctx: TreeContext, modules: list[str]) -> None:
        state = self.prepare(ctx, modules)
        for rel in modules:
            try:
                run_with_big_stack(self.apply_module, ctx, rel, state)
            except Exception:  # a bug outside the transaction: recorded, and the tree goes on
                ctx.outcomes.append(Failed(self.id, rel, traceback.format_exc(limit=8)))

    def prepare(self, ctx: TreeContext, modules: list[str]) -> Any:
        return None

    def apply_module(self, ctx: TreeContext, rel: str, state: Any) -> None:
        raise NotImplementedError
