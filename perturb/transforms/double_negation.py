"""double-negation: a condition ``t`` becomes ``not not t``.

Sites: the test of every ``if``, ``elif``, ``while``, conditional expression (``a if t else b``)
and ``assert``.

Why behaviour is kept: each of these consumes only the truth of its test, and ``not not t``
consults the truth of ``t`` exactly once, as the statement itself would, then yields the same
truth; an exception from ``__bool__``/``__len__`` is raised at the same point. An ``assert``
still disappears entirely under ``python -O``.

Layout: ``t`` is parenthesised where ``not`` would bind to less of it (``not not (a or b)``)
and, for the reader, when it is a comparison; empty whitespace before the test becomes one
space, because ``if(t):`` would otherwise print as ``ifnot not (t):``.

Refused (reported):
- a constant test (``while True``, ``while 1``, ``if 0``, ``if __debug__``, a string, ``None``,
  ``...``): type checkers, linters and the compiler reason about these idioms syntactically
  (infinite loops, unreachable code), and ``not not True`` is an obvious artefact;
- a test that already starts with ``not``: ``not not not t`` reads as a mistake rather than as
  code someone wrote.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, SiteTransform
from repoanchor.perturb.transform_checks import negated, spaced

NUMBER = m.OneOf(m.Integer(), m.Float(), m.Imaginary())
CONSTANT = m.OneOf(
    NUMBER,
    m.UnaryOperation(operator=m.OneOf(m.Minus(), m.Plus()), expression=NUMBER),
    m.SimpleString(),
    m.ConcatenatedString(),
    m.Ellipsis(),
    m.Name("True") | m.Name("False") | m.Name("None") | m.Name("__debug__"),
)
ALREADY_NEGATED = m.UnaryOperation(operator=m.Not())
WHITESPACE_BEFORE_TEST = {
    cst.If: "whitespace_before_test",
    cst.While: "whitespace_after_while",
    cst.IfExp: "whitespace_after_if",
    cst.Assert: "whitespace_after_assert",
}


class _Collector(SiteCollector):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def _consider(self, node: cst.If | cst.While | cst.IfExp | cst.Assert) -> None:
        if m.matches(node.test, CONSTANT):
            self.ctx.skip("constant test: static tools treat literal conditions specially", self.label(node))
        elif m.matches(node.test, ALREADY_NEGATED):
            self.ctx.skip("already negated: the test starts with `not`", self.label(node))
        else:
            self.add(node)

    def visit_If(self, node: cst.If) -> None:
        self._consider(node)

    def visit_While(self, node: cst.While) -> None:
        self._consider(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._consider(node)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._consider(node)


def _double(site: Site, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    field = WHITESPACE_BEFORE_TEST[type(updated)]
    return updated.with_changes(
        test=negated(negated(updated.test)),
        **{field: spaced(getattr(updated, field))},
    )


class DoubleNegation(SiteTransform):
    id = "double-negation"
    description = "Wrap an if/elif/while/conditional-expression/assert test in `not not`."
    collector = _Collector
    rewrite = staticmethod(_double)
