"""if-else-swap: ``if t: A else: B`` becomes ``if not t: B else: A``, and ``A if t else B``
becomes ``B if not t else A``.

Sites: every ``if``/``elif`` whose ``orelse`` is a plain ``else`` (in an elif chain only the last
``elif`` qualifies: an earlier link's ``orelse`` is another condition, not a block to swap in)
and every conditional expression.

Why behaviour is kept: the test is evaluated exactly once either way and ``not`` consults its
truth (``__bool__``/``__len__``) exactly as the branch would, so the same block runs and an
exception from the truth test is raised at the same point. A test that is already ``not u``
becomes ``u`` instead of ``not not u`` (keeping parentheses around it, which may hold line
breaks): the truth of ``u`` is consulted once either way.

Layout: the test is parenthesised where ``not`` would bind to less of it (``not (a or b)``) and,
for the reader, when it is a comparison (``not (a < b)``);
in a conditional expression the branch moved in front of ``if`` is parenthesised when it is a
conditional, lambda or walrus, which may not stand there bare. Comments stay on their lines:
the comment on the ``if`` line, on the ``else:`` line and above ``else:`` stay put while the
blocks (with the comments inside them) move. Empty whitespace next to a keyword becomes one
space, because ``if(t):`` would otherwise print as ``ifnot t:``.

Refused (reported): an ``if``/``elif``/``else:`` line carrying ``# pragma: no cover``, because
coverage tools exclude the clause that line opens and the swap would move the exclusion onto
the other block.
"""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, SiteTransform
from repoanchor.perturb.transform_checks import negated, spaced

NO_COVER = re.compile(r"#\s*pragma[:\s]?\s*no\s*cover", re.IGNORECASE)
NOT = m.UnaryOperation(operator=m.Not())
NOT_BARE_IN_FRONT = (cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Yield)


def _header(suite: cst.BaseSuite) -> cst.TrailingWhitespace:
    """The end of the line that opens `suite`: its comment belongs to that line."""
    return suite.header if isinstance(suite, cst.IndentedBlock) else suite.trailing_whitespace


def _with_header(suite: cst.BaseSuite, header: cst.TrailingWhitespace) -> cst.BaseSuite:
    if isinstance(suite, cst.IndentedBlock):
        return suite.with_changes(header=header)
    return suite.with_changes(trailing_whitespace=header)


def _opposite(test: cst.BaseExpression) -> cst.BaseExpression:
    """``not t`` for `t`, but ``u`` for ``not u`` (keeping any parentheses, which may hold line breaks)."""
    if m.matches(test, NOT) and not m.findall(test.operator, m.Comment()):
        inner = test.expression
        return inner.with_changes(lpar=[*test.lpar, *inner.lpar], rpar=[*inner.rpar, *test.rpar])
    return negated(test)


def _front(expr: cst.BaseExpression) -> cst.BaseExpression:
    if not expr.lpar and isinstance(expr, NOT_BARE_IN_FRONT):
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


class _Collector(SiteCollector):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit_If(self, node: cst.If) -> None:
        if not isinstance(node.orelse, cst.Else):
            return
        for line in (_header(node.body), _header(node.orelse.body)):
            if line.comment is not None and NO_COVER.search(line.comment.value):
                reason = "coverage pragma: swapping would move the excluded clause to the other block"
                self.ctx.skip(reason, self.label(node))
                return
        self.add(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.add(node)


def _swap_if(node: cst.If) -> cst.If:
    body, orelse = node.body, node.orelse
    assert isinstance(orelse, cst.Else)  # only plain-else ifs are collected
    return node.with_changes(
        test=_opposite(node.test),
        whitespace_before_test=spaced(node.whitespace_before_test),
        body=_with_header(orelse.body, _header(body)),
        orelse=orelse.with_changes(body=_with_header(body, _header(orelse.body))),
    )


def _swap_ifexp(node: cst.IfExp) -> cst.IfExp:
    return node.with_changes(
        body=_front(node.orelse),
        test=_opposite(node.test),
        orelse=node.body,
        whitespace_before_if=spaced(node.whitespace_before_if),
        whitespace_after_if=spaced(node.whitespace_after_if),
        whitespace_before_else=spaced(node.whitespace_before_else),
        whitespace_after_else=spaced(node.whitespace_after_else),
    )


def _swap(site: Site, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    return _swap_if(updated) if isinstance(updated, cst.If) else _swap_ifexp(updated)


class IfElseSwap(SiteTransform):
    id = "if-else-swap"
    description = "Negate an if/else (or conditional expression) test and swap its two branches."
    collector = _Collector
    rewrite = staticmethod(_swap)
