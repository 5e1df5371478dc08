"""for-to-while: a ``for`` loop becomes an explicit ``iter``/``next`` loop.

``for T in X: body else: E`` becomes::

    _it = iter(X)                 # an implicit tuple X is parenthesised
    _flag = True                  # only with an else clause
    while True:
        try:
            _item = next(_it)
        except StopIteration:
            break
        T = _item
        body                      # each break of this loop first sets _flag = False
    del _it
    if _flag:
        E

The target is assigned outside the ``try`` so that a StopIteration raised by a target
setter (``obj.attr``, ``d[k]``) propagates as it does from a ``for``; the body is outside it
for the same reason and so that its exceptions get no StopIteration ``__context__``.
``del _it`` drops the iterator where the ``for`` would, so a generator left by ``break`` is
finalised at the same point (not mirrored: when the body raises, the iterator lives as long
as the frame, i.e. the traceback; ``_item`` keeps the last item referenced after the loop).
Breaks in nested loops (but not in their else clauses, which belong to this loop), defs
and classes are not this loop's and are left alone.

Refused, and reported:
- ``iter``, ``next`` or ``StopIteration`` bound anywhere in the module, or any star-import:
  the rewrite relies on the builtins.
- loops in a class body: the new names would become class attributes (e.g. Enum members).
- loops in a function that uses locals()/vars()/eval/exec or frame introspection: the new
  locals would be visible there.
- a for-else whose body has a ``continue`` of this loop inside a ``finally``: it can cancel a
  break after the flag was cleared, so the else would wrongly be skipped.
- ``async for``: its protocol (aiter/anext) has no builtin spelling before Python 3.10.
New names are private (``_`` prefix), so module-level loops add nothing to star-imports.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.bindings import unless_rebound
from repoanchor.perturb.context import FileContext
from repoanchor.perturb.naming import fresh_name, identifiers_in
from repoanchor.perturb.sites import Site, SiteCollector, SiteRewrite, SiteTransform
from repoanchor.perturb.transform_checks import introspection_in, may_introspect
from repoanchor.perturb.traversal.walk import walk

BUILTINS = ("iter", "next", "StopIteration")


class _Collector(SiteCollector):
    WALK = "statements"  # only statements are sites: never descend into expressions

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.owners: list[cst.FunctionDef | cst.ClassDef] = []
        self.introspection: dict[int, str | None] = {}
        self.introspects = may_introspect(ctx.known_code)  # else no function needs walking for it

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool | None:
        self.owners.append(node)
        return super().visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.owners.pop()
        super().leave_FunctionDef(original_node)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool | None:
        self.owners.append(node)
        return super().visit_ClassDef(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.owners.pop()
        super().leave_ClassDef(original_node)

    def visit_For(self, node: cst.For) -> None:
        reason = self._refusal(node)
        if reason:
            self.ctx.skip(reason, self.label(node))
        else:
            self.add(node)

    def _refusal(self, node: cst.For) -> str | None:
        if node.asynchronous is not None:
            return "async for: aiter/anext have no builtin spelling before Python 3.10"
        owner = self.owners[-1] if self.owners else None
        if isinstance(owner, cst.ClassDef):
            return "class body: new loop names would become class attributes"
        if owner is not None and self.introspects and id(owner) not in self.introspection:
            self.introspection[id(owner)] = introspection_in(owner)
        found = self.introspection.get(id(owner))
        if found:
            return f"introspection: {found} in the function could see the new locals"
        if node.orelse is not None and _continue_in_finally(node.body):
            return "continue in finally: it could cancel a break after the else flag was cleared"
        return None


class _OwnLoop:
    """Mixin: stay in the loop being rewritten; a nested loop's else clause still belongs to it."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef


class _FinallyContinue(_OwnLoop, cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.in_finally = 0
        self.found = False

    def visit_For(self, node: cst.For | cst.While) -> bool:
        if node.orelse is not None:
            walk(self, node.orelse)
        return False

    visit_While = visit_For

    def visit_Finally(self, node: cst.Finally) -> None:
        self.in_finally += 1

    def leave_Finally(self, original_node: cst.Finally) -> None:
        self.in_finally -= 1

    def visit_Continue(self, node: cst.Continue) -> None:
        self.found = self.found or self.in_finally > 0


def _continue_in_finally(body: cst.BaseSuite) -> bool:
    finder = _FinallyContinue()
    walk(finder, body)
    return finder.found


class _BreakFlagger(_OwnLoop, cst.CSTTransformer):
    """Prefix each break of the loop being rewritten with ``flag = False``."""

    def __init__(self, flag: str) -> None:
        super().__init__()
        self.flag = flag

    @property
    def clear(self) -> cst.Assign:
        # A fresh node per break: a node object shared between two places in the tree would be
        # renamed or rewritten in one place only by identity-based passes that run later.
        return cst.Assign([cst.AssignTarget(cst.Name(self.flag))], cst.Name("False"))

    def visit_For(self, node: cst.For | cst.While) -> bool:
        return False

    visit_While = visit_For

    def leave_For(self, original_node: cst.For | cst.While, updated_node: cst.For | cst.While) -> cst.CSTNode:
        if updated_node.orelse is None:
            return updated_node
        return updated_node.with_changes(orelse=updated_node.orelse.visit(self))

    leave_While = leave_For

    def _flagged(self, body: Sequence[cst.BaseSmallStatement]) -> list[cst.BaseSmallStatement]:
        return [part for small in body for part in ([self.clear, small] if m.matches(small, m.Break()) else [small])]

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel:
        if m.matches(updated_node, m.SimpleStatementLine([m.Break()])):  # a lone break keeps a line of its own
            clear = _line(self.clear).with_changes(leading_lines=updated_node.leading_lines)
            return cst.FlattenSentinel([clear, updated_node.with_changes(leading_lines=())])
        return updated_node.with_changes(body=self._flagged(updated_node.body))

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        return updated_node.with_changes(body=self._flagged(updated_node.body))


def _line(small: cst.BaseSmallStatement) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([small])


def _assign(target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return _line(cst.Assign([cst.AssignTarget(target)], value))


def _call(func: str, arg: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Name(func), [cst.Arg(arg)])


def _loop(loop: cst.For, it: str, item: str) -> cst.While:
    """``while True:`` fetching the next item, binding the target outside the try, then the body."""
    fetch = cst.Try(
        cst.IndentedBlock([_assign(cst.Name(item), _call("next", cst.Name(it)))]),
        handlers=[cst.ExceptHandler(cst.IndentedBlock([_line(cst.Break())]), cst.Name("StopIteration"))],
    )
    body = loop.body
    if isinstance(body, cst.IndentedBlock):
        block = body.with_changes(body=[fetch, _assign(loop.target, cst.Name(item)), *body.body])
    else:
        statements = cst.SimpleStatementLine(list(body.body), trailing_whitespace=body.trailing_whitespace)
        block = cst.IndentedBlock([fetch, _assign(loop.target, cst.Name(item)), statements])
    return cst.While(cst.Name("True"), block)


class _Rewrite:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.taken = identifiers_in(ctx.code)

    def _name(self) -> str:
        return fresh_name(self.ctx.rng, self.taken, private=True, avoid=self.ctx.project.absent_words)

    def __call__(self, site: Site, original: cst.For, updated: cst.For) -> cst.FlattenSentinel:
        it, item = self._name(), self._name()
        flag = self._name() if updated.orelse is not None else None
        if flag:
            updated = updated.with_changes(body=updated.body.visit(_BreakFlagger(flag)))
        source = updated.iter
        if isinstance(source, cst.Tuple) and not source.lpar:
            source = source.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        new = [_assign(cst.Name(it), _call("iter", source)).with_changes(leading_lines=updated.leading_lines)]
        if flag:
            new.append(_assign(cst.Name(flag), cst.Name("True")))
        new += [_loop(updated, it, item), _line(cst.Del(cst.Name(it)))]
        if flag:
            orelse = updated.orelse
            new.append(cst.If(cst.Name(flag), orelse.body, leading_lines=orelse.leading_lines))
        return cst.FlattenSentinel(new)


class ForToWhile(SiteTransform):
    id = "for-to-while"
    changes_locals = True  # the loop's iterator is held in a new local: a code object's co_varnames shows it
    nests = True  # the `try` around `next` sits inside the new loop
    description = "Rewrite a for loop (with its else) as a while True loop over iter()/next()."
    collector = _Collector

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        return unless_rebound(module, ctx, super().candidates(module, ctx), BUILTINS)

    def rewriter(self, module: cst.Module, ctx: FileContext) -> SiteRewrite:
        return _Rewrite(ctx)
