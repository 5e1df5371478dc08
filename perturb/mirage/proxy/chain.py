"""Proxy chains for one import statement: the plan, the proxy modules' source, the new statement.

A chain is ``depth`` real modules beside the target. The target imports its names from the
head; each link forwards every name to the next; the leaf runs the original import. Every
proxy resolves names in a module ``__getattr__`` (PEP 562) instead of importing in its body:

- importing a proxy runs nothing, so a package walker that imports every module is unaffected,
  and only the target's statement — wherever it sits (``try``, ``if``; never a function body, see
  `proxy.scan`) — triggers the chain, so conditional imports stay conditional;
- the leaf re-executes the original statement every time the target's statement runs, so
  ``importlib.reload``, ``sys.modules`` patching (``sys.modules["yaml"] = None`` to simulate a
  missing dependency) and import cycles behave exactly as before, and an ImportError raised by
  the leaf propagates unchanged (same type, same ``.name``) to the target's ``try``.

Fan-out: the names of one statement (``from x import a, b, c``, ``import os, sys``) are split
into ``min(fanout, len(names))`` contiguous groups, one chain each; the target statement becomes
one statement per group, in the original order, so names are bound in the original order and a
failure leaves exactly the same earlier names bound. Chains are never shared between statements.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import libcst as cst

from repoanchor.perturb.mirage.proxy.names import module_name, parameter_name
from repoanchor.perturb.mirage.proxy.scan import Binding
from repoanchor.perturb.sites import Site


@dataclass(frozen=True)
class Chain:
    bindings: tuple[Binding, ...]
    modules: tuple[str, ...]
    """Proxy module names, head (imported by the target) first, leaf last."""

    @property
    def names(self) -> list[str]:
        return [binding.local for binding in self.bindings]


def split(bindings: list[Binding], fanout: int, rng: random.Random) -> list[tuple[Binding, ...]]:
    """`bindings` cut into min(fanout, n) contiguous, non-empty groups at seeded cut points."""
    groups = min(fanout, len(bindings))
    cuts = sorted(rng.sample(range(1, len(bindings)), groups - 1))
    edges = [0, *cuts, len(bindings)]
    return [tuple(bindings[a:b]) for a, b in zip(edges, edges[1:], strict=False)]


def plan(
    bindings: list[Binding],
    depth: int,
    fanout: int,
    rng: random.Random,
    taken: set[str],
    avoid: set[str],
    vocabulary: tuple[str, ...] | None = None,
) -> list[Chain]:
    """Fresh chains for one statement; every module name is claimed in `taken`."""
    return [
        Chain(group, tuple(module_name(rng, taken, avoid, vocabulary) for _ in range(depth)))
        for group in split(bindings, fanout, rng)
    ]


def link_source(names: list[str], next_module: str, relative: bool, rng: random.Random) -> str:
    """A middle proxy: forwards each name from the next module of the chain."""
    origin = f".{next_module}" if relative else next_module
    return _getattr_module(rng, names, [f"from {origin} import {name}" for name in names])


def leaf_source(bindings: tuple[Binding, ...], rng: random.Random) -> str:
    """The last proxy: performs the original import of each name."""
    return _getattr_module(rng, [b.local for b in bindings], [b.leaf for b in bindings])


def _getattr_module(rng: random.Random, names: list[str], statements: list[str]) -> str:
    param = parameter_name(rng, set(names))
    lines = [f"def __getattr__({param}):"]
    for name, statement in zip(names, statements, strict=True):
        lines += [f'    if {param} == "{name}":', f"        {statement}", f"        return {name}"]
    lines.append(f'    raise AttributeError(f"module {{__name__!r}} has no attribute {{{param}!r}}")')
    return "\n".join(lines) + "\n"


def target_statements(
    original: cst.Import | cst.ImportFrom, chains: list[Chain], relative: bool
) -> list[cst.ImportFrom]:
    """The statements replacing `original`: one per chain, same local names, same order.

    The last keeps the original's semicolon; the others get LibCST's default separator.
    """
    statements = [
        cst.ImportFrom(
            module=cst.Name(chain.modules[0]),
            names=[cst.ImportAlias(name=cst.Name(name)) for name in chain.names],
            relative=[cst.Dot()] if relative else [],
        )
        for chain in chains
    ]
    statements[-1] = statements[-1].with_changes(semicolon=original.semicolon)
    return statements


_PRAGMA = re.compile(r"#\s*(noqa|type:|pragma|pylint:|isort:|nosec|fmt:)")


def split_rewrite(site: Site, statements: list[cst.ImportFrom]):
    """(node to replace, its ancestors, rewrite) for `replace_nodes`.

    A statement alone on its line becomes one line per chain; a line-level pragma comment
    (``# noqa``, ``# type: ignore``) is repeated on every line, any other comment stays on the
    first. Inside a compound line (``import a; import b`` or ``if x: import a``) the
    statements are separated by semicolons.
    """
    line = site.path[-1] if site.path else None
    if len(statements) == 1 or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        new = statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)
        return site.node, site.path, lambda original, updated: new
    comment = line.trailing_whitespace
    repeated = comment if comment.comment and _PRAGMA.search(comment.comment.value) else cst.TrailingWhitespace()
    lines = [
        cst.SimpleStatementLine(
            body=[statement.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)],
            leading_lines=line.leading_lines if index == 0 else (),
            trailing_whitespace=comment if index == 0 else repeated,
        )
        for index, statement in enumerate(statements)
    ]
    return line, site.path[:-1], lambda original, updated: cst.FlattenSentinel(lines)
