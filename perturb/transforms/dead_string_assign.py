"""dead-string-assign: insert ``<name> = "<keyword>"`` before a statement of a function body.

The assignment binds a fresh local that nothing reads, so the function behaves the same.
Sites are the statements of each ``def`` body, recursing into ``if``/``elif``/``else``,
``for``/``while`` and their ``else``, ``with``, ``try``/``except``/``else``/``finally`` and
``match`` cases, but not into nested ``def``/``class`` (a nested ``def`` is its own function;
a class body is not a function body). A one-line body (``if x: return 1``) takes the
assignment as its first small statement. Refused, with the reason class in brackets:

- [introspection] the function, or anything nested in it, calls ``locals()``, ``vars()``,
  ``eval``, ``exec``, ``dir()`` or inspects frames, which would see the extra local;
- [docstring] the position before a function's docstring: the docstring would become a plain
  expression and ``__doc__`` would change;
- [unreachable] positions after a ``return``/``raise``/``break``/``continue`` in the same
  block: code there is dead already, and the prior art's choice not to add to it is kept.

The name is drawn by ``naming.fresh_name`` against every identifier in the module text, so no
nested function, ``global`` or later statement can refer to it. The keyword is an arbitrary
string, emitted as a literal that ``ast.literal_eval`` turns back into exactly that string:
quotes and backslashes escaped, unprintable characters (newlines, NUL, bidi controls,
surrogates) as ``\\x``/``\\u``/``\\U`` escapes (``\\x00``, never ``\\0``, which would swallow a
following digit as octal), and non-ASCII characters escaped when the file is not UTF-8.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator

import libcst as cst

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.naming import fresh_name, identifiers_in
from repoanchor.perturb.sites import Site, SiteCollector, SiteRewrite, SiteTransform
from repoanchor.perturb.transform_checks import introspection_in, is_docstring, may_introspect

TERMINAL = (cst.Return, cst.Raise, cst.Break, cst.Continue)
Block = cst.IndentedBlock | cst.SimpleStatementSuite


def string_literal(text: str, encoding: str = "utf-8") -> str:
    """A double-quoted literal that evaluates to exactly `text` and encodes in `encoding`."""
    keep_unicode = codecs.lookup(encoding).name == "utf-8"
    out = []
    for char in text:
        if char in '\\"':
            out.append("\\" + char)
        elif char.isprintable() and (char.isascii() or keep_unicode):
            out.append(char)
        else:
            out.append(ascii(char)[1:-1])
    return '"' + "".join(out) + '"'


def _inner_blocks(stmt: cst.BaseStatement) -> Iterator[tuple[tuple[cst.CSTNode, ...], Block]]:
    """The blocks of a compound statement that still belong to the enclosing function, each with the nodes
    from `stmt` down to the block's parent (the ancestors a rewrite rebuilds)."""
    if isinstance(stmt, cst.If):
        yield (stmt,), stmt.body
        if isinstance(stmt.orelse, cst.Else):
            yield (stmt, stmt.orelse), stmt.orelse.body
        elif stmt.orelse is not None:
            yield from (((stmt, *holders), block) for holders, block in _inner_blocks(stmt.orelse))
    elif isinstance(stmt, (cst.For, cst.While, cst.Try, cst.TryStar)):
        yield (stmt,), stmt.body
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            yield from (((stmt, handler), handler.body) for handler in stmt.handlers)
            if stmt.finalbody is not None:
                yield (stmt, stmt.finalbody), stmt.finalbody.body
        if stmt.orelse is not None:
            yield (stmt, stmt.orelse), stmt.orelse.body
    elif isinstance(stmt, cst.With):
        yield (stmt,), stmt.body
    elif isinstance(stmt, cst.Match):
        yield from (((stmt, case), case.body) for case in stmt.cases)


def _terminal(stmt: cst.BaseStatement) -> str | None:
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, TERMINAL):
                return type(small).__name__.lower()
    return None


class _Collector(SiteCollector):
    WALK = "statements"  # only statements are sites: never descend into expressions

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.introspects = may_introspect(ctx.known_code)  # else no function needs walking for it

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        super().visit_FunctionDef(node)
        found = introspection_in(node) if self.introspects else None
        if found:
            self.ctx.skip(f"introspection: {found} could observe the new local", self.label(node))
        else:
            self._block(node.body, (*self.ancestors, node), function_body=True)
        return True

    def _add(self, node: cst.CSTNode, path: tuple[cst.CSTNode, ...]) -> None:
        # Found by recursion inside visit_FunctionDef, beyond the walker's ancestor stack: the recursion keeps
        # each site's ancestors itself, so that no rewrite has to walk the module to find them.
        self.sites.append(Site(node, self.label(node), {}, path))

    def _block(self, block: Block, path: tuple[cst.CSTNode, ...], function_body: bool = False) -> None:
        """`path`: the block's ancestors, from the module down to its parent."""
        docstring_skip = "docstring: inserting before it would turn it into a plain expression"
        if isinstance(block, cst.SimpleStatementSuite):
            if function_body and is_docstring(block.body[0]):
                self.ctx.skip(docstring_skip, self.label(block))
            else:
                self._add(block, path)
            return
        terminated = None
        inside = (*path, block)
        for index, stmt in enumerate(block.body):
            if function_body and index == 0 and is_docstring(stmt):
                self.ctx.skip(docstring_skip, self.label(stmt))
            elif terminated:
                self.ctx.skip(f"unreachable: after a {terminated} in the same block", self.label(stmt))
            else:
                self._add(stmt, inside)
            terminated = terminated or _terminal(stmt)
            for holders, inner in _inner_blocks(stmt):
                self._block(inner, (*inside, *holders))


class _Inserter:
    """Rewrites one site: a fresh name and a keyword drawn per site, in rewrite order."""

    def __init__(self, ctx: FileContext, encoding: str) -> None:
        self.ctx, self.encoding, self.taken = ctx, encoding, identifiers_in(ctx.code)

    def _assign(self) -> cst.Assign:
        name = fresh_name(self.ctx.rng, self.taken, avoid=self.ctx.project.absent_words)
        value = string_literal(self.ctx.rng.choice(self.ctx.keywords), self.encoding)
        return cst.Assign([cst.AssignTarget(cst.Name(name))], cst.SimpleString(value))

    def __call__(self, site: Site, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode | cst.FlattenSentinel:
        if isinstance(updated, cst.SimpleStatementSuite):
            return updated.with_changes(body=[self._assign(), *updated.body])
        return cst.FlattenSentinel([cst.SimpleStatementLine([self._assign()]), updated])


class DeadStringAssign(SiteTransform):
    id = "dead-string-assign"
    changes_locals = True  # the string is assigned to a new local: a code object's co_varnames shows it
    description = 'Insert an unused `name = "<keyword>"` assignment before a statement in a function.'
    keyword_bound = True
    collector = _Collector

    def rewriter(self, module: cst.Module, ctx: FileContext) -> SiteRewrite:
        return _Inserter(ctx, module.encoding)
