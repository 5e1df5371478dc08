"""Rewrite one module: chosen literals become ``binding["key"]``, the loader goes in at the top.

Pure: a parsed module and the chosen value groups in, the new module, the JSON entries and
the per-site records out. All occurrences of one exact value share one key, so literals that
were one interned object stay one object. Only ancestors of replaced nodes are rebuilt.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import libcst as cst

from repoanchor.perturb.mirage.constants.context import context_of, words_of
from repoanchor.perturb.mirage.constants.loader import insert_loader, loader_statement, subscript
from repoanchor.perturb.mirage.constants.names import fresh_key
from repoanchor.perturb.sites import Site
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.speed.emission import FileEmission
from repoanchor.perturb.traversal.replace import replace_nodes

# A keyword directly followed by what may start a literal: a quote, a digit, a sign or a dot.
_GLUED = re.compile(
    r"\b(?:and|or|not|in|is|if|else|elif|return|yield|await|assert|raise|del|while|for|lambda|with|as|except"
    r"|case|match|from|import)[\"'0-9.\-]"
)


@dataclass
class Rewrite:
    module: cst.Module
    entries: dict[str, object] = field(default_factory=dict)
    """JSON key -> exact original value."""
    sites: list[tuple[str, str, str]] = field(default_factory=list)
    """(where, before, after) per replaced literal, then one for the loader."""


@dataclass(frozen=True)
class Target:
    binding: str
    filename: str
    loader_index: int
    owner_words: tuple[str, ...]
    """Words of the module (or package) name: the fallback context of a key."""


def externalize(
    module: cst.Module,
    groups: list[list[Site]],
    target: Target,
    rng: random.Random,
    taken_keys: set[str],
    source: str,
    emission: FileEmission,
) -> Rewrite:
    """Replace every site of every group; `taken_keys` (the file's keys) gains the new ones.

    `source` is the module's text: only when a keyword touches a literal somewhere in it
    (``return"x"``) are node positions computed, in an emission of the module (`emission`, the file's: the
    statements holding no site are reused, and the new ones are kept for the module's output).
    """
    sites = [site for group in groups for site in group]
    glued = _GLUED.search(source)
    text, spans = emission.spans(module, [s.node for s in sites], [s.path for s in sites]) if glued else ("", {})
    result = Rewrite(module)
    rewrites, paths = {}, []
    for group in groups:
        first = group[0]
        value = first.data["value"]
        words, role = context_of(list(first.path), first.node)
        scope = words_of(first.data["scope"][-1]) if first.data["scope"] else list(target.owner_words)
        key = fresh_key(rng, value, words, role, scope, taken_keys)
        result.entries[key] = value
        for site in group:
            glued = _touches_word(text, spans.get(id(site.node)))
            new = subscript(target.binding, key, site.node, glued)
            rewrites[id(site.node)] = _replacer(new)
            paths.append(site.path)
            result.sites.append((site.where, code_for_node(site.node, module), code_for_node(new, module)))
    rewritten = replace_nodes(module, rewrites, paths)
    loader = loader_statement(rng, target.binding, target.filename)
    result.module = insert_loader(rewritten, loader, target.loader_index)
    result.sites.append(("<module>/loader", "", code_for_node(loader, module)))
    return result


def _replacer(new: cst.BaseExpression):
    return lambda original, updated: new


def _touches_word(text: str, span: tuple[int, int] | None) -> bool:
    """Whether the character before the literal continues a name or keyword (``return"x"``)."""
    if span is None or span[0] == 0:
        return False
    before = text[span[0] - 1]
    return before.isalnum() or before == "_"
