"""Emitting successive states of one module, each statement's code made once, and block line counts.

A pass rewrites a few sites and leaves most statements the very objects they were (LibCST nodes are
immutable). `FileEmission` keeps each emitted statement's code by identity, cut at every indentation and
less the indentation it sat under: emitting a later state (the next pass's source, the final output)
re-emits only new statements, and an unchanged one is its kept pieces joined by the indentation it sits
under now (a wrapper moves statements one level in). The text is LibCST's own, token for token.

A block's line count (from its first statement's first syntactic line, after comments and decorators,
to its last statement's last line) depends on the block alone, since indentation never adds a newline:
each statement's newlines are counted once, when it is first emitted, and every block of every later
state is counted from its statements' numbers.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import libcst as cst
from libcst._nodes.base import CSTNode

from repoanchor.perturb.speed.codegen import MarkingState, code_for_node, emitting, module_code
from repoanchor.perturb.speed.patching import ClassPatch
from repoanchor.perturb.speed.prerendered import ROOTS, held, prerendered_codegen
from repoanchor.perturb.traversal.statements import STATEMENT_LEVEL
from repoanchor.perturb.traversal.walk import NODE_TYPES, children

_HOLDER_CLASSES = tuple(c for c in STATEMENT_LEVEL if c not in (cst.SimpleStatementLine, cst.SimpleStatementSuite))
"""What holds an indented block (a statement line holds none)."""
_SNIPPET = cst.Module(body=[])  # the defaults `code_for_node` emits a lone node under
_HOLDERS = frozenset(t for t in NODE_TYPES if issubclass(t, _HOLDER_CLASSES))  # exact types: isinstance on ABCs is slow


@dataclass(frozen=True)
class _Statement:
    node: cst.BaseStatement
    """Kept alive: entries are found by id(node)."""
    total: int
    """Newlines in the statement's whole code (leading lines, decorators, its last newline)."""
    head: int
    """Newlines before its syntactic start."""
    tail: int
    """Newlines before the last character of its syntactic span."""
    last_token: str
    """Its code's last token, which a module without a trailing newline drops at the end of the file."""
    pieces: tuple[str, ...]
    """Its code cut at each indentation, less the indentation it sat under: joined by wherever it sits."""


class FileEmission:
    """Code and block line counts of successive states of one module, each statement emitted once."""

    def __init__(self, module: cst.Module | None = None) -> None:
        """`module`: the file's parse, whose indentation and newline every state keeps; given, snippets
        (`node_code`) reuse and keep statements from the first one, before any whole emission of the file."""
        self._statements: dict[int, _Statement] = {}
        self._defaults = None if module is None else (module.default_indent, module.default_newline)

    def code(self, module: cst.Module, *, keep: bool = True) -> str:
        """`module.code`. `keep=False` for a last emission: its new statements are not kept for later ones."""
        if not keep and not self._statements:
            return module_code(module)  # nothing to reuse, nothing to keep: LibCST's emission as it is
        self._defaults = (module.default_indent, module.default_newline)  # the same for every state of a file
        return self._emit(module, keep)

    @property
    def reuses_snippets(self) -> bool:
        """Whether `node_code` reuses kept statements: the file was emitted under a lone node's defaults."""
        return self._defaults == (_SNIPPET.default_indent, _SNIPPET.default_newline)

    def node_code(self, node: cst.CSTNode) -> str:
        """`code_for_node(node)` (default indentation and newline), statements kept from this file's emissions
        reused when they were made under those same defaults; its new statements are kept in turn (a snippet's
        inserted statement is usually in the output too)."""
        if not self.reuses_snippets:
            return code_for_node(node)
        return self._emit(node, keep=True)

    def block_lines(self, module: cst.Module) -> tuple[str, dict[int, int]]:
        """The module's code and id(block) -> line count of each indented block that holds a statement."""
        text = self.code(module)
        found = self._statements

        def count(block: cst.IndentedBlock) -> int:
            before_last = sum(found[id(stmt)].total for stmt in block.body[:-1])
            return before_last + found[id(block.body[-1])].tail - found[id(block.body[0])].head + 1

        return text, {id(block): count(block) for block in indented_blocks(module)}

    def spans(self, module: cst.Module, nodes: list[cst.CSTNode], holders: list[tuple[cst.CSTNode, ...]]):
        """`node_spans(module, nodes)` (the code, and id(node) -> character span), in a keeping emission: the
        nodes and `holders` (each node's ancestors) are emitted afresh to mark the nodes, other statements reused,
        and the new statements kept for the next emissions of the file. Snippets (`node_code`) do not depend on it:
        whether they reuse kept statements is settled by the file's defaults, not by the emissions made before."""
        state = _KeepingState(
            self._statements, default_indent=module.default_indent, default_newline=module.default_newline
        )
        state.fresh = {id(holder) for path in holders for holder in path} | {id(node) for node in nodes}
        state.writes_prerendered = False  # a marked node may lie inside a registered expression
        state.spans.update((id(node), None) for node in nodes)
        with emitting(), _STATEMENTS_REUSED.applied():
            module._codegen(state)
        state.keep_emitted()
        return state.text_and_spans(id(node) for node in nodes)

    def _emit(self, node: cst.CSTNode, keep: bool) -> str:
        indent, newline = self._defaults
        kind = _KeepingState if keep else _ReusingState
        state = kind(self._statements, default_indent=indent, default_newline=newline)
        with emitting(), _STATEMENTS_REUSED.applied():
            node._codegen(state)
        if keep:
            state.keep_emitted()
        return state.text()


def indented_blocks(module: cst.Module) -> list[cst.IndentedBlock]:
    """Every indented block with a statement; only statement-level nodes are walked (no block lives in an
    expression)."""
    blocks, stack = [], [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.IndentedBlock) and node.body:
            blocks.append(node)
        stack.extend(child for child in children(node) if type(child) in _HOLDERS)
    return blocks


class _ReusingState(MarkingState):
    """A plain emission writing a kept statement as its kept code (unless `fresh` holds its id), and a registered
    expression as its registered code (`prerendered`)."""

    writes_prerendered = True

    def __init__(self, known: dict[int, _Statement], **kwargs) -> None:
        super().__init__(**kwargs)
        self.known = known
        self.fresh: set[int] = set()
        self.reused: dict[int, str] = {}
        """Index of each reused statement's last token -> that statement's own last token."""

    def statement(self, node: cst.BaseStatement, kwargs: dict) -> None:
        entry = None if kwargs or id(node) in self.fresh else self.known.get(id(node))  # kwargs: `elif` for an If
        if entry is not None and entry.node is node:
            self._reuse(entry)
        else:
            self._emit_new(node, kwargs)

    def _emit_new(self, node: cst.BaseStatement, kwargs: dict) -> None:
        CSTNode._codegen(node, self, **kwargs)

    def _reuse(self, entry: _Statement) -> None:
        """The kept code, its outer indentation (left out when kept) put back at each place."""
        self.tokens.append("".join(self.indent_tokens).join(entry.pieces))
        self.reused[len(self.tokens) - 1] = entry.last_token

    def text(self) -> str:
        tokens = self.tokens
        last = self.reused.get(len(tokens) - 1)
        if self.popped and last is not None:  # the dropped token is the reused code's own last one
            return "".join(tokens[:-1]) + tokens[-1][: len(tokens[-1]) - len(last)]
        return super().text()


class _KeepingState(_ReusingState):
    """A reusing emission that also notes where new statements, their syntactic spans and every indentation
    fall, so that `keep_emitted` keeps the new statements' code and newlines."""

    def __init__(self, known: dict[int, _Statement], **kwargs) -> None:
        super().__init__(known, **kwargs)
        self.emitted: list[tuple[cst.BaseStatement, int, int, int]] = []
        self.indents: list[int] = []
        """Token index of each indentation emitted (all of `indent_tokens`, one token each), in order."""

    def add_indent_tokens(self) -> None:
        self.indents.append(len(self.tokens))
        self.tokens.extend(self.indent_tokens)

    def _emit_new(self, node: cst.BaseStatement, kwargs: dict) -> None:
        if kwargs:  # an If emitted as `elif`: not kept (its code differs from the plain If's)
            CSTNode._codegen(node, self, **kwargs)
            return
        start = len(self.tokens)
        self.spans[id(node)] = None  # wanted: its syntactic span is marked
        CSTNode._codegen(node, self)
        self.emitted.append((node, len(self.indent_tokens), start, len(self.tokens)))

    def _reuse(self, entry: _Statement) -> None:
        tokens, indent = self.tokens, self.indent_tokens
        tokens.append(entry.pieces[0])
        for piece in entry.pieces[1:]:
            self.indents.append(len(tokens))  # noted: a new statement around this one cuts its pieces here
            tokens.extend(indent)
            tokens.append(piece)
        self.reused[len(tokens) - 1] = entry.last_token

    def keep_emitted(self) -> None:
        for node, depth, start, end in self.emitted:
            if id(node) not in self.known:
                self.known[id(node)] = self._measured(node, depth, start, end)

    def _measured(self, node: cst.BaseStatement, depth: int, start: int, end: int) -> _Statement:
        tokens = self.tokens
        first, past = self.spans[id(node)]
        before_span = "".join(tokens[start:first])
        to_span_end = before_span + "".join(tokens[first:past])
        pieces, at = [], start
        for index in self.indents[bisect_left(self.indents, start) : bisect_left(self.indents, end)]:
            pieces.append("".join(tokens[at:index]))
            at = index + depth  # the statement's own indentation: whatever it sits under next time
        pieces.append("".join(tokens[at:end]))
        return _Statement(
            node,
            total=sum(piece.count("\n") for piece in pieces),  # indentation holds no newline
            head=before_span.count("\n"),
            tail=to_span_end[:-1].count("\n"),
            last_token=self.reused.get(end - 1, tokens[end - 1]),
            pieces=tuple(pieces),
        )


def _reusing_codegen(self, state, **kwargs) -> None:
    if type(state) in _REUSING_STATES:
        state.statement(self, kwargs)
    else:
        CSTNode._codegen(self, state, **kwargs)


_REUSING_STATES = frozenset({_ReusingState, _KeepingState})
_EXPRESSIONS_REUSED = tuple((kind, "_codegen", prerendered_codegen) for kind in ROOTS)
_STATEMENTS_REUSED = ClassPatch((cst.BaseStatement, "_codegen", _reusing_codegen), *_EXPRESSIONS_REUSED)


@contextmanager
def emissions_held() -> Iterator[None]:
    """Both swaps the emissions of this module make (`emitting`, statements reused), held over a whole file's
    passes by the engine: each emission then only counts itself in, where making and undoing the swaps each time
    would also empty the interpreter's method caches for every LibCST class. Registered expressions go as it ends."""
    with emitting(), _STATEMENTS_REUSED.applied(), held():
        yield
