"""Raises whose error line a test expects as pytest prints it: left at their indentation, with their function.

pytest's long traceback prints the failing source line and below it the exception as ``E`` followed by that line's
indentation. pytest's own ``test_yield_fixture_with_no_value`` expects ``E               ValueError: custom did not
yield a value``, raised in ``_pytest/fixtures.py``: if-true-wrap and try-reraise-wrap, wrapping the block that holds
the raise, moved it one level in, and the line no longer matched. So the ``E`` lines of the test files' strings are
read (`error_messages`, beside the quoted frames), and a function holding a raise whose literal text is in one is
left alone, and so is every block and statement around it (`refuse_around_raises`): a wrap there moves it too.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from repoanchor.perturb.sites import Site, refuse_inside
from repoanchor.perturb.traversal.statements import small_statements
from repoanchor.perturb.traversal.walk import children

ERROR_LINE = re.compile(r"^E\s{2,}[A-Za-z_][\w.]*: (.+)$")
"""pytest's error line: ``E``, the failing line's indentation, then ``Type: message``."""
MIN_TEXT = 10
"""Characters of literal text a raise's message and a quoted line must share: a word or two would match by chance."""


def error_messages(text: str) -> set[str]:
    """The messages of the pytest error lines in `text` (a string constant of a test file)."""
    return {found.group(1).strip() for line in text.splitlines() if (found := ERROR_LINE.match(line))}


def refuse_around_raises(sites: list[Site], module: cst.Module, ctx: Any) -> list[Site]:
    """`sites` less those inside a function whose raise a test's error line shows (`ctx.project.quoted_errors`), or
    around it (a block or statement holding the function), each refused with `ctx.skip`."""
    if not ctx.project.quoted_errors or not sites:
        return sites
    functions, around = _quoted_raises(module, ctx.project.quoted_errors)
    why = "quoted-error-line: a test expects pytest's error line for a raise here, at its indentation"
    kept = []
    for site in refuse_inside(sites, module, dict.fromkeys(functions, why), ctx):
        if id(site.node) in around:
            ctx.skip(why, site)
        else:
            kept.append(site)
    return kept


def _quoted_raises(module: cst.Module, messages: frozenset[str]) -> tuple[set[int], set[int]]:
    """(ids of the functions holding a quoted raise, or of the raise's statement at module level; ids of the nodes
    around those)."""
    functions: set[int] = set()
    around: set[int] = set()
    for raise_, path in small_statements(module, cst.Raise):
        if raise_.exc is None or not _quoted(raise_.exc, messages):
            continue
        owner = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], cst.FunctionDef)), None)
        holders = (*path, raise_) if owner is None else path[: owner + 1]
        functions.add(id(holders[-1]))
        around.update(id(holder) for holder in holders[:-1])
    return functions, around


def _quoted(expression: cst.BaseExpression, messages: frozenset[str]) -> bool:
    """Whether the literal text of `expression` (its strings and f-strings' text) and a quoted message share a run
    of `MIN_TEXT` characters: a literal inside the message, or a part of the message between wildcards inside the
    literals."""
    literals = [text.strip() for text in _literal_texts(expression)]
    joined = " ".join(literals)
    for message in messages:
        if any(len(text) >= MIN_TEXT and text in message for text in literals):
            return True
        if any(len(part.strip()) >= MIN_TEXT and part.strip() in joined for part in re.split(r"[*?]", message)):
            return True
    return False


def _literal_texts(node: cst.CSTNode) -> list[str]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.SimpleString):
            found.append(current.raw_value)
        elif isinstance(current, cst.FormattedStringText):
            found.append(current.value)
        else:
            stack.extend(children(current))
    return found
