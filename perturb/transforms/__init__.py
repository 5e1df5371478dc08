"""Transformations: one small class per file, selected by stable id through a plain dict.

A transformation has a stable ``id``, a ``family`` ("spt" or "repomirage"), a one-line
``description``, a ``keyword_bound`` flag and a ``scope``. A file-scope `Transform` (the SPTs)
has a read-only ``candidates`` and an ``apply`` that rewrites exactly the sites it is given (by
node identity), one file at a time, in parallel. A tree-scope `TreeTransform` (RepoMirage)
rewrites selected modules together with the files it creates, one journaled transaction per
module (see `perturb.treectx`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from typing import ClassVar, Protocol

import libcst as cst

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site
from repoanchor.perturb.treectx import TreeContext


class Transform(Protocol):
    id: ClassVar[str]
    family: ClassVar[str]
    description: ClassVar[str]
    keyword_bound: ClassVar[bool]
    scope: ClassVar[str]
    """"file" (default when absent) or "tree"."""

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        """Every site this transform could rewrite; refusals go to `ctx.skip` with a reason."""
        ...

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: FileContext) -> cst.Module:
        """Rewrite exactly `sites` (found by identity) and report each via `ctx.changed`."""
        ...


class TreeTransform(Protocol):
    id: ClassVar[str]
    family: ClassVar[str]
    description: ClassVar[str]
    keyword_bound: ClassVar[bool]
    scope: ClassVar[str]  # "tree"

    def apply_tree(self, ctx: TreeContext, modules: list[str]) -> None:
        """Rewrite the selected `modules` (paths relative to ctx.root), one `ctx.transaction` each."""
        ...


_PKG = "repoanchor.perturb.transforms"

TRANSFORMS: dict[str, str] = {
    "if-else-swap": f"{_PKG}.if_else_swap.IfElseSwap",
    "while-unroll": f"{_PKG}.while_unroll.WhileUnroll",
    "for-to-while": f"{_PKG}.for_to_while.ForToWhile",
    "comparison-swap": f"{_PKG}.comparison_swap.ComparisonSwap",
    "local-rename": f"{_PKG}.local_rename.LocalRename",
    "operand-permute": f"{_PKG}.operand_permute.OperandPermute",
    "if-true-wrap": f"{_PKG}.if_true_wrap.IfTrueWrap",
    "and-split": f"{_PKG}.and_split.AndSplit",
    "dead-code": f"{_PKG}.dead_code.DeadCode",
    "try-reraise-wrap": f"{_PKG}.try_reraise_wrap.TryReraiseWrap",
    "double-negation": f"{_PKG}.double_negation.DoubleNegation",
    "string-split": f"{_PKG}.string_split.StringSplit",
    "dead-string-assign": f"{_PKG}.dead_string_assign.DeadStringAssign",
    "dead-method": f"{_PKG}.dead_method.DeadMethod",
    # The RepoMirage transforms live with their support code, one folder per perturbation.
    "proxy-imports": "repoanchor.perturb.mirage.proxy.transform.ProxyImports",
    "runtime-target-masking": "repoanchor.perturb.mirage.masking.transform.RuntimeTargetMasking",
    "constant-externalization": "repoanchor.perturb.mirage.constants.transform.ConstantExternalization",
}
"""Stable id -> dotted class path. A full dotted path is also accepted by `get_transform`."""

SPT_IDS: tuple[str, ...] = tuple(list(TRANSFORMS)[:14])
"""The 14 classic semantics-preserving transformations (Jagged Frontier)."""
REPOMIRAGE_IDS: tuple[str, ...] = ("proxy-imports", "runtime-target-masking", "constant-externalization")


@functools.cache  # asked once per pass per file; a failed lookup raises and is not cached
def get_transform_class(spec: str) -> type[Transform]:
    spec = spec.partition("@")[0]  # "dead-method@1": one of several passes of a transform (one per keyword)
    path = TRANSFORMS.get(spec, spec)
    module_name, _, class_name = path.rpartition(".")
    if not module_name or (spec not in TRANSFORMS and "." not in spec):
        raise ValueError(f"unknown transform {spec!r}; known: {', '.join(TRANSFORMS)}")
    try:
        return getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load transform {spec!r} from {path}: {exc}") from exc


def get_transform(spec: str) -> Transform:
    return get_transform_class(spec)()


def scope_of(spec: str) -> str:
    return getattr(get_transform_class(spec), "scope", "file")
