"""and-split: ``if L and R: body else: E`` becomes ``if L: (if R: body else: E) else: E``.

Sites: every ``if``/``elif`` whose whole test is an ``and`` (an ``and`` under ``not`` or ``or``
is not split). The split is at the last top-level ``and``: ``a and b and c`` parses as
``(a and b) and c``, so L is ``a and b`` and R is ``c``.

Why behaviour is kept: a test ``L and R`` evaluates L, consults its truth once, and evaluates R
(and consults its truth) only when L is true; the nested form does exactly the same, and both
false outcomes reach a copy of E. E (an ``else`` block or a whole ``elif`` chain) is
duplicated, which is safe because at most one copy runs; without ``else`` nothing is
duplicated. The inner copy is a deep clone, so no node object appears twice in the tree.

Layout: the comments above the ``if``, on its line and inside its blocks are kept; L or R that
spans lines is parenthesised, since the test's own parentheses no longer surround it.

Refused (reported):
- a comment between L and R or just inside the test's parentheses, which has no place left in
  the split form and would be lost;
- a ``global``/``nonlocal`` in E: the second copy of the declaration would follow the first
  copy's uses of the name, which is a SyntaxError.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, SiteTransform
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.transform_checks import scope_declaration_in, spaced

AND_TEST = m.BooleanOperation(operator=m.And())


def _comment_count(node: cst.CSTNode) -> int:
    return len(m.findall(node, m.Comment()))


def _standalone(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`expr` as a whole ``if`` test: a line break is only legal inside parentheses."""
    if "\n" in code_for_node(expr) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _inner_body(body: cst.BaseSuite) -> cst.BaseSuite:
    """The body under ``if R:``; the comment on the ``if`` line stays on the outer ``if L:``."""
    if isinstance(body, cst.IndentedBlock):
        return body.with_changes(header=cst.TrailingWhitespace())
    return body


def _outer_body(body: cst.BaseSuite, inner: cst.If) -> cst.IndentedBlock:
    if isinstance(body, cst.IndentedBlock):
        return cst.IndentedBlock(body=[inner], header=body.header, indent=body.indent)
    return cst.IndentedBlock(body=[inner])


class _Collector(SiteCollector):
    WALK = "statements"  # only statements are sites: never descend into expressions

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if not m.matches(test, AND_TEST):
            return
        assert isinstance(test, cst.BooleanOperation)  # narrowed by AND_TEST
        declaration = scope_declaration_in(node.orelse) if node.orelse is not None else None
        if _comment_count(test) > _comment_count(test.left) + _comment_count(test.right):
            self.ctx.skip("comment at split: it sits around the split `and` and would be lost", self.label(node))
        elif declaration:
            self.ctx.skip(f"scope declaration in else: `{declaration}` cannot be duplicated", self.label(node))
        else:
            self.add(node)


def _split(site: Site, original: cst.CSTNode, updated: cst.If) -> cst.If:
    test = updated.test
    assert isinstance(test, cst.BooleanOperation)  # only `and` tests are collected
    inner = cst.If(
        test=_standalone(test.right),
        body=_inner_body(updated.body),
        orelse=updated.orelse.deep_clone() if updated.orelse is not None else None,
    )
    return updated.with_changes(
        test=_standalone(test.left),
        whitespace_before_test=spaced(updated.whitespace_before_test),
        body=_outer_body(updated.body, inner),
    )


class AndSplit(SiteTransform):
    id = "and-split"
    nests = True  # the body moves into a second `if`
    description = "Split `if L and R:` into nested ifs, duplicating the else branch into both."
    collector = _Collector
    rewrite = staticmethod(_split)
