"""The rewrites a decoy is made of: which sites of a kind one decoy mutates, and how.

Each rewrite has `replace_nodes`' signature, ``(original, updated) -> node``, so that it sees
the node with its inner mutations already applied. See `perturb.mirage.masking_decoys` for
the kinds and why each one is safe to parse and plausible to read.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import libcst as cst

from repoanchor.perturb.sites import Site
from repoanchor.perturb.transform_checks import negated, spaced

OPPOSITE = {
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.LessThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThan,
    cst.GreaterThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.GreaterThan,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
}
"""Each comparison operator and its negation; symbolic and word operators never mix."""


def choose(kind: str, sites: list[Site], rng: random.Random) -> Iterator[tuple[Site, object, str | None]]:
    """(site, rewrite, label) for the sites of `kind` one decoy mutates; a label of None is part
    of the previous mutation (a swap rewrites two aliases)."""
    if kind == "swap-imports":
        yield from _swaps(sites, rng)
        return
    picked = rng.sample(sites, rng.randint(1, min(3, len(sites)))) if sites else []
    if kind == "drop-function":
        left = {}
        for site in sorted(picked, key=lambda s: s.where):
            block = site.data["block"]
            left.setdefault(id(block), len(block.body))
            if left[id(block)] > 1:
                left[id(block)] -= 1
                yield site, lambda o, u: cst.RemoveFromParent(), site.where
    elif kind == "invert-if":
        for site in picked:
            yield site, _invert, site.where
    elif kind == "flip-compare":
        for site in picked:
            yield site, _flip_compare, site.where
    else:
        for site in picked:
            yield site, _flip, f"{site.where}: {site.node.value}"


def _invert(original: cst.If, updated: cst.If) -> cst.If:
    return updated.with_changes(
        test=negated(updated.test), whitespace_before_test=spaced(updated.whitespace_before_test)
    )


def _flip_compare(original: cst.Comparison, updated: cst.Comparison) -> cst.Comparison:
    target = updated.comparisons[0]
    op = target.operator
    spacing = {"whitespace_before": op.whitespace_before, "whitespace_after": op.whitespace_after}
    if isinstance(op, (cst.Is, cst.In)):
        spacing["whitespace_between"] = cst.SimpleWhitespace(" ")
    flipped = OPPOSITE[type(op)](**spacing)
    return updated.with_changes(comparisons=[target.with_changes(operator=flipped)])


def _flip(original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    if isinstance(updated, cst.Integer):
        return updated.with_changes(value=str(int(updated.value) + 1))
    return updated.with_changes(value="False" if updated.value == "True" else "True")


def _swaps(sites: list[Site], rng: random.Random):
    """Up to two disjoint pairs of aliases with distinct local names trade those names."""
    pool, wanted = rng.sample(sites, len(sites)), rng.randint(1, 2)
    pairs, used = [], set()
    for first in pool:
        for second in pool:
            if len(pairs) == wanted or id(first) in used:
                break
            if id(second) not in used and first is not second and first.data["local"] != second.data["local"]:
                pairs.append((first, second))
                used |= {id(first), id(second)}
    for first, second in pairs:
        yield (
            first,
            _rebind(first.data["name"], second.data["local"]),
            f"{first.data['local']}<->{second.data['local']}",
        )
        yield second, _rebind(second.data["name"], first.data["local"]), None


def _rebind(name: str, local: str):
    def rewrite(original: cst.ImportAlias, updated: cst.ImportAlias) -> cst.ImportAlias:
        asname = None if name == local else cst.AsName(name=cst.Name(local))
        return updated.with_changes(asname=asname)

    return rewrite
