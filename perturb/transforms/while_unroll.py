"""while-unroll: peel the first iteration of a ``while`` loop into a copy of the loop.

``while t: B else: E`` becomes::

    while t:
        B
        while t:
            B
        else:
            E
        break
    else:
        E

(without ``else`` on the original, neither loop has one).

Why behaviour is kept, case by case, with n the number of iterations the original runs:
- t false at once (n = 0): the outer test fails and the outer ``else`` runs E, as before.
- the first B runs to its end: the inner loop runs iterations 2..n with the same tests; when t
  turns false the inner ``else`` runs E once and ``break`` leaves the outer loop without its
  ``else``, so E ran exactly once. A ``break`` in the inner B skips the inner ``else``, then
  ``break`` leaves the outer loop: E never runs, as with the original ``break``.
- ``break`` in the first B leaves the outer loop and skips its ``else``: as the original.
- ``continue`` in the first B re-tests t at the outer loop: true starts iteration 2 in the
  outer body, false runs the outer ``else``; as the original.
The test is evaluated the same number of times in the same order. (The previous
implementation's inner loop had no ``else``, so E was lost whenever B ran at least once.)

Refused (reported):
- ``break``/``continue`` in E that belong to an enclosing loop: the inner copy of E sits inside
  the outer loop's body, where they would act on the unrolled loop instead;
- ``global``/``nonlocal`` in B or E: the second copy of the declaration would follow the first
  copy's uses of the name, which is a SyntaxError;
- a loop of more than MAX_LINES lines: doubling it (and nested loops again) makes the
  variant conspicuously large.
"""

from __future__ import annotations

import libcst as cst

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, SiteTransform
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.transform_checks import scope_declaration_in
from repoanchor.perturb.traversal.walk import walk

MAX_LINES = 100


class _LoopControl(cst.CSTVisitor):
    """``break``/``continue`` acting on a loop around the visited code (none nested inside it)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Break(self, node: cst.Break) -> None:
        self.found = True

    def visit_Continue(self, node: cst.Continue) -> None:
        self.found = True

    def _loop(self, node: cst.For | cst.While) -> bool:
        if node.orelse is not None:  # a loop's else clause is outside the loop
            walk(self, node.orelse)
        return False

    def visit_For(self, node: cst.For) -> bool:
        return self._loop(node)

    def visit_While(self, node: cst.While) -> bool:
        return self._loop(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def _escaping_loop_control(node: cst.CSTNode) -> bool:
    finder = _LoopControl()
    walk(finder, node)
    return finder.found


def _refusal(node: cst.While) -> str | None:
    if node.orelse is not None and _escaping_loop_control(node.orelse):
        return "loop control in else: a copy of the else would break/continue the unrolled loop"
    declaration = scope_declaration_in(node.body)
    if declaration is None and node.orelse is not None:
        declaration = scope_declaration_in(node.orelse)
    if declaration:
        return f"scope declaration: `{declaration}` cannot be duplicated"
    lines = code_for_node(node).strip("\n").count("\n") + 1
    if lines > MAX_LINES:
        return f"large loop: {lines} lines, more than {MAX_LINES} to duplicate"
    return None


def _unrolled_body(body: cst.BaseSuite, inner: cst.While) -> cst.IndentedBlock:
    """The first iteration's statements, then the rest of the loop, then ``break``."""
    tail = [inner, cst.SimpleStatementLine(body=[cst.Break()])]
    if isinstance(body, cst.IndentedBlock):
        return body.with_changes(body=[*body.body, *tail])
    first = cst.SimpleStatementLine(body=body.body)
    return cst.IndentedBlock(body=[first, *tail], header=body.trailing_whitespace)


class _Collector(SiteCollector):
    WALK = "statements"  # only statements are sites: never descend into expressions

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit_While(self, node: cst.While) -> None:
        refusal = _refusal(node)
        if refusal:
            self.ctx.skip(refusal, self.label(node))
        else:
            self.add(node)


def _unroll(site: Site, original: cst.CSTNode, updated: cst.While) -> cst.While:
    inner = updated.with_changes(
        test=updated.test.deep_clone(),
        body=updated.body.deep_clone(),
        orelse=updated.orelse.deep_clone() if updated.orelse is not None else None,
        leading_lines=[],
    )
    return updated.with_changes(body=_unrolled_body(updated.body, inner))


class WhileUnroll(SiteTransform):
    id = "while-unroll"
    nests = True  # the loop's copy sits inside the loop
    description = "Peel the first iteration of a while loop into a nested copy of the loop (else kept)."
    collector = _Collector
    rewrite = staticmethod(_unroll)
