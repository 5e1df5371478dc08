"""Per-file context handed to a transformation: the seeded RNG, keywords, metadata and logs.

A transformation never touches files or global state; everything it may consult or report
goes through this object, which the engine creates fresh for each (file, transform) pass.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import libcst as cst

from repoanchor.perturb.results import SiteRecord, Skipped, snippet
from repoanchor.perturb.sites import Site
from repoanchor.perturb.speed.codegen import code_for_node, module_code
from repoanchor.perturb.speed.emission import FileEmission


@dataclass
class ProjectInfo:
    """Facts about the whole tree that a single file cannot tell."""

    min_python: tuple[int, int] = (3, 8)
    """Oldest Python the project supports; outputs must parse under it."""
    class_members: dict[str, set[str]] = field(default_factory=dict)
    """Class name -> names bound in its body, over every module of the project."""
    class_bases: dict[str, list[str]] = field(default_factory=dict)
    """Class name -> last dotted component of each base, over every module of the project."""
    enumerated: set[str] = field(default_factory=set)
    """Classes whose members some code of the project, tests included, enumerates (`project.enumerated_classes`)."""
    indexed: bool = False
    """The class index and `enumerated` were read off every Python file of the tree (`project.project_info`),
    so a file's own listings of members are among them already."""
    quoted_frames: frozenset[tuple[str, str]] = frozenset()
    """(file name, function name) of the frames a test's expected traceback quotes line by line
    (`source/quoted_frames.py`): those functions stay as written."""
    quoted_errors: frozenset[str] = frozenset()
    """Messages of the pytest error lines (``E`` + indentation + ``Type: message``) the tests expect
    (`source/quoted_errors.py`): a raise they show stays at its indentation."""
    rewritten_asserts: frozenset[str] = frozenset()
    """Files of the modules whose asserts pytest rewrites beyond tests and conftest files (plugins, registered
    modules; `source/rewritten_asserts.py`): nothing inside their asserts is rewritten."""
    locals_read: str | None = None
    """Which test file reads code objects' or frames' local names (`source/code_locals.py`): transforms that add or
    rename locals refuse the project."""
    locals_named: dict[str, str] = field(default_factory=dict)
    """{local name: which test file reads it from a frame by that name} (`source/code_locals.py`; key "*": by a
    name no literal gives): local-rename leaves such locals alone."""
    absent_words: frozenset[str] = frozenset()
    """Words a test expects absent from some output (`source/absent_words.py`): no generated name holds one."""
    sources_read: dict[str, str] = field(default_factory=dict)
    """{rel: why} of the modules whose whole text a test reads (`source/source_reads.py`): no transform rewrites
    their text (masking keeps it in the hidden twin)."""
    unparsed: dict[str, str] = field(default_factory=dict)
    """{rel: why} of the files this Python cannot parse where the project declares a newer one
    (`source/unparsed.py`): dead-method and the structural passes refuse while there is any."""


@dataclass
class FileContext:
    transform_id: str
    path: str
    module: cst.Module
    """The module this pass starts from."""
    rng: random.Random
    keywords: tuple[str, ...] = ()
    project: ProjectInfo = field(default_factory=ProjectInfo)
    skips: list[Skipped] = field(default_factory=list)
    changes: list[SiteRecord] = field(default_factory=list)
    original: cst.Module | None = None
    """The file's parse before the first pass over it, where earlier passes made `module` (None: `module` is it).
    A check that must judge the code as written (dead-method's empty class bodies) reads it."""
    emission: FileEmission = field(default_factory=FileEmission)
    """The file's emissions and block line counts; every pass over one file shares it, so an unchanged
    statement is emitted once."""
    _code: str | None = None

    @property
    def code(self) -> str:
        """The source text of `module`, emitted on first use (emitting is not free)."""
        if self._code is None:
            self._code = self.emission.code(self.module)
        return self._code

    @property
    def known_code(self) -> str | None:
        """The text of `module` if something has emitted it already, else None (never emits)."""
        return self._code

    def remember_code(self, module: cst.Module, text: str) -> None:
        """Keep `text` as the code of `module` when a codegen made for another purpose (line counts,
        spans) emitted it anyway: a later `code` of the same module state then costs nothing."""
        if module is self.module and self._code is None:
            self._code = text

    def skip(self, reason: str, where: str | Site = "") -> None:
        """Record why a site (or the whole file, with no `where`) was not transformed."""
        label = where.where if isinstance(where, Site) else where
        self.skips.append(Skipped(self.transform_id, self.path, reason, label))

    def changed(self, site: Site, before: cst.CSTNode, after: cst.CSTNode | cst.FlattenSentinel) -> None:
        """Record a rewrite of `site`; called by a transformer when it replaces a node."""
        before_code = code_of(before, emission=self.emission)
        after_code = code_of(after, known=(before, before_code), emission=self.emission)
        self.changes.append(SiteRecord(site.where, snippet(before_code), snippet(after_code)))


def code_of(
    node: cst.CSTNode | cst.FlattenSentinel,
    known: tuple[cst.CSTNode, str] | None = None,
    emission: FileEmission | None = None,
) -> str:
    """Source of a node for a snippet (which `snippet` then bounds). `known`: a node already rendered and its
    code, reused where a FlattenSentinel holds that very node (an insertion beside an unchanged statement).

    `emission`: the file's. Where it reuses kept statements, the whole node is rendered: its unchanged
    statements are their kept code joined, and its new ones are kept for the file's next emissions (the
    output holds them too). Otherwise (a file indented or broken unlike a lone node's defaults, or an emission
    made without its module) long blocks are abbreviated first, as rendering is not free; an abbreviated block is a
    new node, though, whose statements no emission has kept."""
    if isinstance(node, cst.FlattenSentinel):
        parts = node.nodes[:SNIPPET_STATEMENTS]
        return "".join(known[1] if known and n is known[0] else code_of(n, emission=emission) for n in parts)
    if isinstance(node, cst.Module):
        return module_code(node)
    if emission is not None and emission.reuses_snippets:
        return emission.node_code(node)
    return code_for_node(_abbreviate(node))


SNIPPET_STATEMENTS = 4
SNIPPET_DEPTH = 2
_ELLIPSIS_LINE = cst.SimpleStatementLine([cst.Expr(cst.Ellipsis())])


def _abbreviate(node: cst.CSTNode, depth: int = 0) -> cst.CSTNode:
    """Keep the first few statements of each block, two blocks deep; snippets are bounded anyway.

    Rendering a whole wrapped class or function for every site would cost a codegen per site
    and nesting level; this keeps snippet rendering proportional to the snippet.
    """
    if isinstance(node, cst.IndentedBlock):
        # Head and tail survive: insertions land first (wrappers) or last (appended methods).
        if depth >= SNIPPET_DEPTH:
            return node.with_changes(body=[_ELLIPSIS_LINE])
        kept = node.body
        if len(kept) > SNIPPET_STATEMENTS:
            kept = [*kept[: SNIPPET_STATEMENTS - 2], _ELLIPSIS_LINE, kept[-1]]
        body = [s if s is _ELLIPSIS_LINE else _abbreviate(s, depth + 1) for s in kept]
        same = len(body) == len(node.body) and all(new is old for new, old in zip(body, node.body, strict=True))
        return node if same else node.with_changes(body=body)  # an unchanged node can reuse its kept code
    changes = {}
    for name in ("body", "orelse", "finalbody"):
        child = getattr(node, name, None)
        if isinstance(child, cst.CSTNode) and (short := _abbreviate(child, depth)) is not child:
            changes[name] = short
    handlers = getattr(node, "handlers", None) or ()
    shortened = [_abbreviate(handler, depth) for handler in handlers]
    if any(new is not old for new, old in zip(shortened, handlers, strict=True)):
        changes["handlers"] = shortened
    return node.with_changes(**changes) if changes else node
