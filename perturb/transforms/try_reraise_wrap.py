"""try-reraise-wrap: the statements of a block become ``try: ... except Exception: raise``.

A site is an indented block (the body of a def, class, if/elif/else, for, while, with,
try/except/finally or case) spanning 5-100 lines from its first statement to its last
(comments above the first statement and its decorators are not counted).

A bare ``raise`` re-raises the caught exception object unchanged (same type, args,
``__cause__`` and ``__context__``: re-raising the exception being handled does not chain it
to itself), and ``Exception`` leaves ``GeneratorExit``, ``KeyboardInterrupt`` and
``SystemExit`` uncaught, so the block behaves as before. ``return``/``break``/``continue``
and ``yield`` inside a ``try`` body mean what they meant, and a bare ``raise`` in the block
still sees the exception of an enclosing handler. Class bodies are fine: the handler binds
no name. A ``try`` adds a statically nested block; CPython allows 20, so very deep nesting
can make the output fail to compile (the engine then rolls the pass back).

A leading docstring stays first, outside the ``try``: inside it would no longer be the
``__doc__``. (The prior implementation compared coordinates and so never wrapped a block
with a docstring.) Comments above the first wrapped statement move above the ``try``.

Refused, and reported:
- ``Exception`` bound anywhere in the module, or any star-import: the handler must catch
  the builtin class, not whatever the name was rebound to.
- a block that is only a docstring: there is nothing to wrap.
- a block whose statements after the docstring include ``from __future__``: such an import
  is only valid at the top of a module (defensive: a block holding one does not compile).
"""

from __future__ import annotations

import libcst as cst

from repoanchor.perturb.bindings import unless_rebound
from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site
from repoanchor.perturb.transforms._blocks import BlockTransform, wrap_after_docstring


def _wrap(site: Site, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
    reraise = cst.ExceptHandler(cst.IndentedBlock([cst.SimpleStatementLine([cst.Raise()])]), cst.Name("Exception"))
    return wrap_after_docstring(updated, lambda inner, lines: cst.Try(inner, handlers=[reraise], leading_lines=lines))


class TryReraiseWrap(BlockTransform):
    id = "try-reraise-wrap"
    description = "Wrap a 5-100 line block (after its docstring) in try/except Exception: raise."
    rewrite = staticmethod(_wrap)

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        return unless_rebound(module, ctx, super().candidates(module, ctx), ("Exception",))
