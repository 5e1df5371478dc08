"""dead-code: an ``if <opaque false predicate>:`` guarding a throwaway assignment is inserted.

A site is an indented block (the body of a def, class, if/elif/else, for, while, with,
try/except/finally or case) spanning 1-100 lines from its first statement to its last
(comments above the first statement and its decorators are not counted). The dead
statement goes before the block's first statement after a leading docstring, which stays
the ``__doc__`` (after the docstring of a docstring-only body, such as an exception class's).
Its shape varies with the pass RNG::

    if <false>:            if <false>:            if <false>:
        name = 12              name = 12              name = other = 12
                               name += 3

The predicate (`_predicates.opaque`) always evaluates to False, so the assignment never runs:
no local is ever bound (``locals()`` is unchanged), and in a class body no attribute (no
Enum member, no dataclass field) appears. Each name is drawn fresh per site, free in the
whole file, so no read of an existing name can turn into a read of a new local. Only
assignments are inserted, never ``yield``/``await``/``return``, so a function's
generator/coroutine nature and its control flow are untouched; no annotation is used,
since an annotated assignment would give a class body an ``__annotations__`` dict.

Refused, and reported: a block whose first statement after the docstring is
``from __future__``: nothing may precede it (such a block does not compile anyway, as the
import is only valid at the top of a module; the check is defensive).
"""

from __future__ import annotations

import random

import libcst as cst

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.naming import fresh_name, identifiers_in
from repoanchor.perturb.sites import Site, SiteRewrite
from repoanchor.perturb.transform_checks import docstring_count
from repoanchor.perturb.transforms._blocks import BlockTransform
from repoanchor.perturb.transforms._predicates import opaque


def _dead_statement(rng: random.Random, taken: set[str], avoid: frozenset[str]) -> cst.If:
    name = fresh_name(rng, taken, avoid=avoid)
    value = cst.Integer(str(rng.randint(0, 99)))
    shape = rng.randrange(3)
    if shape == 2:
        targets = [cst.AssignTarget(cst.Name(name)), cst.AssignTarget(cst.Name(fresh_name(rng, taken, avoid=avoid)))]
        lines = [cst.Assign(targets, value)]
    else:
        lines = [cst.Assign([cst.AssignTarget(cst.Name(name))], value)]
    if shape == 1:
        lines.append(cst.AugAssign(cst.Name(name), cst.AddAssign(), cst.Integer(str(rng.randint(1, 9)))))
    body = cst.IndentedBlock([cst.SimpleStatementLine([small]) for small in lines])
    return cst.If(opaque(rng, False), body)


def _inserter(ctx: FileContext):
    taken = identifiers_in(ctx.code)

    def insert(site: Site, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        keep = docstring_count(updated.body)
        dead = _dead_statement(ctx.rng, taken, ctx.project.absent_words)
        rest = list(updated.body[keep:])
        if rest:  # comments and blank lines above the first statement now sit above the dead one
            dead = dead.with_changes(leading_lines=rest[0].leading_lines)
            rest[0] = rest[0].with_changes(leading_lines=())
        return updated.with_changes(body=[*updated.body[:keep], dead, *rest])

    return insert


class DeadCode(BlockTransform):
    id = "dead-code"
    changes_locals = True  # its dead branches bind new locals: a code object's co_varnames shows it
    description = "Insert an assignment guarded by an always-false opaque predicate at the top of a block."
    lines = (1, 100)
    wraps = False

    def rewriter(self, module: cst.Module, ctx: FileContext) -> SiteRewrite:
        return _inserter(ctx)
