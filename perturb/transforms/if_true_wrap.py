"""if-true-wrap: the statements of a block are wrapped in ``if <opaque predicate>:``.

A site is an indented block (the body of a def, class, if/elif/else, for, while, with,
try/except/finally or case) spanning 5-100 lines from its first statement to its last
(comments above the first statement and its decorators are not counted). The predicate is
drawn from the pass RNG by `_predicates.opaque` and always evaluates to True, so the
wrapped statements run exactly as before: an ``if`` opens no scope, so bindings,
``global``/``nonlocal``, ``yield`` and ``return`` mean what they meant, and class-body names
still become class attributes.

A leading docstring stays first, outside the ``if``: inside it would no longer be the
``__doc__``. (The prior implementation compared coordinates and so never wrapped a block
with a docstring.) Comments above the first wrapped statement move above the ``if``.

Refused, and reported:
- a block that is only a docstring: there is nothing to wrap.
- a block whose statements after the docstring include ``from __future__``: such an import
  is only valid at the top of a module (defensive: a block holding one does not compile).
"""

from __future__ import annotations

import libcst as cst

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteRewrite
from repoanchor.perturb.transforms._blocks import BlockTransform, wrap_after_docstring
from repoanchor.perturb.transforms._predicates import opaque


def _wrapper(ctx: FileContext):
    def wrap(site: Site, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return wrap_after_docstring(
            updated, lambda inner, lines: cst.If(opaque(ctx.rng, True), inner, leading_lines=lines)
        )

    return wrap


class IfTrueWrap(BlockTransform):
    id = "if-true-wrap"
    description = "Wrap a 5-100 line block (after its docstring) in an if on an always-true opaque predicate."

    def rewriter(self, module: cst.Module, ctx: FileContext) -> SiteRewrite:
        return _wrapper(ctx)
