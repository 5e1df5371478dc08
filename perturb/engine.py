"""Apply a sequence of transformations to one source file: parse once, check the result.

`transform_source` is pure: bytes in, bytes (or None) and typed outcomes out. Each pass picks
k = max(1, ceil(phi * n)) of the n candidate sites with a RNG seeded from (seed, transform,
path, pass index) and rewrites them by identity. The final code is emitted once and compiled (unless
the real oldest and newest Pythons compile it afterwards: `check`); if it does not compile, the passes
are replayed with a check after each so that exactly the offending pass is rolled back and reported as
`Failed`. A pass that raises is `Failed` too.
"""

from __future__ import annotations

import math
import random
import traceback
from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

from repoanchor.perturb.context import FileContext, ProjectInfo
from repoanchor.perturb.nesting import TOO_DEEP, scope_of, too_deep
from repoanchor.perturb.results import Applied, Failed, Outcome, Skipped
from repoanchor.perturb.sites import Site
from repoanchor.perturb.source.code_locals import locals_refusal
from repoanchor.perturb.source.jit_compiled import refuse_in_compiled
from repoanchor.perturb.source.line_sensitive import refuse_line_moves
from repoanchor.perturb.source.quoted_errors import refuse_around_raises
from repoanchor.perturb.source.quoted_frames import refuse_quoted
from repoanchor.perturb.source.rewritten_asserts import refuse_in_asserts
from repoanchor.perturb.source.sourcefile import SourceError, decode_source
from repoanchor.perturb.source.unparsed import refusal
from repoanchor.perturb.speed.emission import FileEmission, emissions_held
from repoanchor.perturb.speed.gcpause import cyclic_gc_deferred
from repoanchor.perturb.speed.parsing import parse_source
from repoanchor.perturb.transforms import get_transform
from repoanchor.perturb.validation.compile_check import CURRENT, compile_error

OutputCheck = Literal["grammar", "current", "none"]
"""What `transform_source` compiles each output under: "grammar", the running Python and the project's oldest
grammar (`ast`'s); "current", the running Python only (the real oldest Python compiles it afterwards);
"none", nothing (the real oldest and newest Pythons compile it afterwards, and the running one lies between)."""


@dataclass(frozen=True)
class PassSpec:
    """One transformation pass over a file, with its keywords (keyword-bound transforms)."""

    transform: str
    keywords: tuple[str, ...] = ()


@dataclass
class FileResult:
    path: str
    new_source: bytes | None
    outcomes: list[Outcome] = field(default_factory=list)
    module: cst.Module | None = field(default=None, repr=False, compare=False)
    """The tree `new_source` was emitted from (the file's own parse where nothing changed), for a tree
    transform to read instead of parsing the file again; kept only where the file was transformed in the
    process that goes on (`filepass`), never sent between processes."""
    emission: FileEmission | None = field(default=None, repr=False, compare=False)
    """The passes' emissions of the file, kept with `module`: a tree transform that writes the module emits
    only the statements it made."""


def rng_for(seed: int | str, transform: str, path: str, salt: str = "") -> random.Random:
    """The RNG of one (transform, file) pass; string seeding is stable across runs."""
    return random.Random(f"{seed}|{transform}|{path}|{salt}")


def select_sites(sites: list[Site], fraction: float, rng: random.Random) -> list[Site]:
    if not sites:
        return []
    k = len(sites) if fraction >= 1.0 else max(1, math.ceil(fraction * len(sites)))
    chosen = set(rng.sample(range(len(sites)), k))
    return [site for i, site in enumerate(sites) if i in chosen]


def transform_source(
    source: bytes,
    path: str,
    passes: list[PassSpec],
    *,
    seed: int | str = 0,
    fraction: float = 0.7,
    project: ProjectInfo | None = None,
    keep_tree: bool = False,
    check: OutputCheck = "grammar",
) -> FileResult:
    """Run `passes` over one file's bytes. Never raises for a bad file or a bad transform.

    `keep_tree`: return the final tree in `FileResult.module`. Otherwise it is dropped before the cyclic
    collector runs again, which would walk every node of a tree still alive (a tenth of the work).
    `check` (`OutputCheck`): "grammar" also parses each output under the project's oldest grammar here.
    "current" and "none" are for where the real interpreters compile the output afterwards (`crosscheck`),
    which replays a file they reject with `check="grammar"`: the passes that compile then are rolled back
    one by one as here. "current" still compiles under the running Python, for half the cost; "none"
    compiles nothing, as the running Python lies between the two that will."""
    project = project or ProjectInfo()
    floor = {"grammar": project.min_python, "current": max(project.min_python, CURRENT), "none": None}[check]
    with cyclic_gc_deferred(), emissions_held():
        result = _transform_source(source, path, passes, seed, fraction, project, floor, keep_tree)
        if not keep_tree:
            result.module = result.emission = None
        return result


def _transform_source(source, path, passes, seed, fraction, project, floor, keep_tree: bool) -> FileResult:
    if read := project.sources_read.get(path):
        reason = f"source-read: {read}; a rewrite of its text would show there"
        return FileResult(path, None, [Skipped(get_transform(p.transform).id, path, reason) for p in passes])
    try:
        text = decode_source(source)
        module = parse_source(source)
    except (SourceError, cst.ParserSyntaxError, RecursionError) as exc:
        reason = _parse_reason(exc)
        return FileResult(path, None, [Skipped(get_transform(p.transform).id, path, reason) for p in passes])
    emission = FileEmission(module)  # shared by every pass over this file, rerun included
    final, outcomes, code = _run_passes(module, text, path, passes, seed, fraction, project, None, emission)
    if not any(isinstance(o, Applied) for o in outcomes):
        return FileResult(path, None, outcomes, module, emission)
    code = _emitted(final, code, text, emission, keep_tree)
    if floor is not None and compile_error(code, path, floor):
        if unjudged := compile_error(text, path, floor):  # the checks here cannot judge this file at all
            reason = f"uncheckable: the file itself does not compile under the checks here ({unjudged})"
            return FileResult(path, None, [Skipped(get_transform(p.transform).id, path, reason) for p in passes])
        final, outcomes, code = _run_passes(module, text, path, passes, seed, fraction, project, floor, emission)
        if not any(isinstance(o, Applied) for o in outcomes):
            return FileResult(path, None, outcomes, module, emission)
        code = _emitted(final, code, text, emission, keep_tree)
    return FileResult(path, code.encode(final.encoding), outcomes, final, emission)


def _emitted(module: cst.Module, code: str | None, text: str, emission: FileEmission, keep: bool) -> str:
    """`module`'s code: the text a pass already emitted for it, or an emission now (reusing the statements
    earlier emissions of the file made; `keep`: its new statements are kept too, for a tree transform).

    The file's own text is never reused here: LibCST's emission can differ from it (form feeds),
    and the output has always been an emission of the final module."""
    return code if code is not None and code is not text else emission.code(module, keep=keep)


def _run_passes(module, text, path, passes, seed, fraction, project, check_each, emission: FileEmission):
    """`check_each`: None, or the oldest Python whose compile each applied pass's output must pass."""
    outcomes: list[Outcome] = []
    code: str | None = text
    original = module
    for index, spec in enumerate(passes):
        transform = get_transform(spec.transform)
        ctx = FileContext(
            transform.id,
            path,
            module,
            rng_for(seed, transform.id, path, str(index)),
            spec.keywords,
            project,
            original=None if module is original else original,
            emission=emission,
            _code=code,
        )
        new_module, outcome = _run_pass(transform, module, ctx, fraction, text)
        if check_each and isinstance(outcome, Applied):
            new_code = emission.code(new_module)
            error = compile_error(new_code, path, check_each)
            if error:
                reason = f"output does not compile, rolled back: {error}"
                new_module, outcome = module, Failed(transform.id, path, reason)
            else:
                code = new_code
        elif new_module is not module:
            code = None
        else:
            code = ctx.known_code  # the module is unchanged: text a pass emitted for it stays valid
        module = new_module
        outcomes.extend(ctx.skips)
        outcomes.append(outcome)
    return module, outcomes, code


def _run_pass(transform, module: cst.Module, ctx: FileContext, fraction: float, text: str):
    """One pass: (the new module, its outcome). `text`: the file's source (it tells whether any function of the file
    may read its own line numbers, `line_sensitive`, or be compiled, `jit_compiled`)."""
    if transform.keyword_bound and not ctx.keywords:
        return module, Skipped(ctx.transform_id, ctx.path, "no keyword: this transform inserts a keyword")
    if why := refusal(ctx.transform_id, ctx.project.unparsed, ctx.project.min_python):
        return module, Skipped(ctx.transform_id, ctx.path, why)  # dead-method's class index misses those files
    if why := locals_refusal(transform, ctx.project.locals_read):
        return module, Skipped(ctx.transform_id, ctx.path, why)
    try:
        sites = refuse_quoted(refuse_in_compiled(transform.candidates(module, ctx), module, text, ctx), module, ctx)
        sites = refuse_in_asserts(sites, module, ctx)
        if getattr(transform, "moves_lines", True):
            sites = refuse_around_raises(refuse_line_moves(sites, module, text, ctx), module, ctx)
        if not sites:
            return module, Skipped(ctx.transform_id, ctx.path, "no candidate sites")
        new_module = _applied_within_nesting(transform, module, select_sites(sites, fraction, ctx.rng), ctx)
    except Exception:  # a bug in one transform must not stop the batch: recorded as Failed
        return module, Failed(ctx.transform_id, ctx.path, traceback.format_exc(limit=8))
    if not ctx.changes:
        if new_module is not module and not new_module.deep_equals(module):
            return module, Failed(ctx.transform_id, ctx.path, "code changed but no site was reported")
        return module, Skipped(ctx.transform_id, ctx.path, "no change: every selected site was refused")
    return new_module, Applied(ctx.transform_id, ctx.path, tuple(ctx.changes))


def _applied_within_nesting(transform, module: cst.Module, chosen: list[Site], ctx: FileContext) -> cst.Module:
    """`transform.apply` of the chosen sites; where a transform that nests code took a scope past `MAX_NESTED` blocks,
    applied again without that scope's sites (`nesting.py`), their first records dropped and each refused."""
    records = len(ctx.skips), len(ctx.changes)
    new_module = transform.apply(module, chosen, ctx)
    if not getattr(transform, "nests", False) or not ctx.changes or not (deep := too_deep(module, new_module)):
        return new_module
    del ctx.skips[records[0] :], ctx.changes[records[1] :]
    kept = []
    for site in chosen:
        if scope_of(site.where) in deep:
            ctx.skip(TOO_DEEP, site)
        else:
            kept.append(site)
    return transform.apply(module, kept, ctx) if kept else module


def _parse_reason(exc: Exception) -> str:
    if isinstance(exc, SourceError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "unparseable: nesting too deep for the parser"
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"unparseable: not valid Python 3 ({first_line})"
