"""Apply transformations to a whole source tree: copy, transform, check.

The copy is transformed in two stages: the file-scope passes, each file on its own in worker
processes (filepass.py: file selection, jobs), then the tree-scope RepoMirage transforms one after
another in a fixed order (`TREE_ORDER`), each over the variant written so far with a `TreeContext`.
After writing, changed files are compiled under the oldest and newest supported interpreters
installed here; a file that fails is restored from the source tree and its applied passes become `Failed`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.engine import FileResult, rng_for
from repoanchor.perturb.filepass import grammar_replay, run_file_passes, select_files
from repoanchor.perturb.mirage.facts import SourceFacts, read_source
from repoanchor.perturb.mirage.vocabulary import avoiding
from repoanchor.perturb.results import Outcome, Skipped
from repoanchor.perturb.source.files import FileSkip, copy_source_tree, python_files
from repoanchor.perturb.source.project import project_info
from repoanchor.perturb.source.unparsed import refusal
from repoanchor.perturb.speed.gcpause import cyclic_gc_deferred
from repoanchor.perturb.speed.parsed import ParsedModules
from repoanchor.perturb.transforms import get_transform, get_transform_class, scope_of
from repoanchor.perturb.treectx import TreeContext
from repoanchor.perturb.validation.crosscheck import check_other_interpreters, passes_check


@dataclass
class ApplyConfig:
    transforms: list[str]
    fraction: float = 0.7
    file_fraction: float = 1.0
    targets: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    seed: int | str = 0
    include_tests: bool = False
    include_build: bool = False
    """Also transform build scripts, generated and vendored files (files.py says which; skipped by default)."""
    workers: int = 0  # worker processes; 0 means one per core
    check_interpreters: bool = True
    file_fractions: dict[str, float] = field(default_factory=dict)
    """Per-transform file probability (the sampler's p_file), overriding `file_fraction`."""
    max_files: dict[str, int] = field(default_factory=dict)
    """Per-transform cap on selected files (the sampler's Nf); targets are kept first."""
    options: dict[str, dict] = field(default_factory=dict)
    """Per-transform hyperparameters for tree transforms, e.g. {"proxy-imports": {"depth": 4}}."""
    transform_keywords: dict[str, list[str]] = field(default_factory=dict)
    """Per-transform keywords overriding `keywords` (the sampler: methods vs string literals)."""
    python: str | None = None
    """"X.Y": the oldest Python the variant must run under; None = the project's declared minimum. A suite
    passes its instance's interpreter: the task only ever runs there (pytest 5 declares 3.5, its SWE-bench
    environment is 3.9, and proxies need 3.7)."""
    test_patterns: tuple[str, ...] | None = None
    """Globs of test files (never transformed unless include_tests); None = files.TEST_PATTERNS."""
    vocabulary_from: Path | None = None
    """The tree whose identifiers give generated module names; None = the tree being perturbed. A gold pair
    (V from the original, V' from the original with the gold patch) takes both from the original, so the
    patch's own identifiers can neither rename V''s generated files nor show up in their names."""

    def keywords_for(self, transform: str) -> list[str]:
        return self.transform_keywords.get(transform, self.keywords)


@dataclass
class TreeReport:
    outcomes: list[Outcome]
    file_skips: list[FileSkip]
    changed_files: list[str]
    files_considered: int
    files_parsed: int
    project: ProjectInfo
    interpreter_checks: dict[str, int] = field(default_factory=dict)
    resolution: list[dict[str, str]] = field(default_factory=list)
    """path_resolution_map: visible path -> runtime path, from tree transforms."""
    tree_written: set[str] = field(default_factory=set)
    """Files written by tree transforms: a multi-file transaction cannot be undone one file at a time."""
    integrity_errors: list[str] = field(default_factory=list)
    """Files that fail a cross-interpreter check and could not be rolled back alone."""
    tree_parses: dict[str, int] = field(default_factory=dict)
    """The tree transforms' modules: {"parsed": LibCST parses, "reused": reads served by a tree already made}.
    Not in the variant's metadata: it depends on `workers` (trees never leave a worker process); the variant
    does not."""


def apply_tree(
    src: Path, out: Path, config: ApplyConfig, progress: Callable[[int, int], None] | None = None
) -> TreeReport:
    """Write a transformed copy of `src` to `out` (which must not exist). Removes `out` on a crash."""
    src, out = src.resolve(), out.resolve()
    _check_paths(src, out)
    for transform in config.transforms:
        get_transform_class(transform)  # fail fast on an unknown id, before any copying
    check_options(config)
    copy_source_tree(src, out)
    try:
        return _apply_copied(src, out, config, progress)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise


def check_options(config: ApplyConfig) -> None:
    """Options name a selected transform and keys it reads (`option_names`); anything else would be ignored
    in silence, so it is an error naming the option."""
    selected = {get_transform_class(t).id for t in config.transforms}
    for name, values in config.options.items():
        if name not in selected:
            raise ValueError(f"options for {name}, which is not among the transforms ({', '.join(sorted(selected))})")
        known = getattr(get_transform_class(name), "option_names", frozenset())
        unknown = sorted(set(values) - known)
        if unknown:
            takes = f"known: {', '.join(sorted(known))}" if known else "it takes no options"
            raise ValueError(f"{name}: unknown option(s) {', '.join(unknown)}; {takes}")


def _check_paths(src: Path, out: Path) -> None:
    if not src.is_dir():
        raise ValueError(f"source tree {src} is not a directory")
    if out.exists() or out.is_symlink():
        raise ValueError(f"output {out} already exists; refusing to overwrite")
    if out.is_relative_to(src):
        raise ValueError(f"output {out} is inside the source tree {src}")


def _apply_copied(src: Path, out: Path, config: ApplyConfig, progress) -> TreeReport:
    files, file_skips = python_files(
        src, include_tests=config.include_tests, test_patterns=config.test_patterns, include_build=config.include_build
    )
    passes, outcomes = _usable_passes(config)
    indexed = "dead-method" in passes
    project = project_info(src, files, index_classes=indexed, python=config.python, workers=config.workers)
    file_passes = [t for t in passes if scope_of(t) == "file"]
    selection = {t: select_files(files, t, config) for t in passes}
    tree_passes = sorted((t for t in passes if scope_of(t) == "tree"), key=_tree_order)
    tree_read = _selected_by(selection, tree_passes)
    check = passes_check(config.check_interpreters, project.min_python, bool(tree_passes))
    run = (src, out, files, file_passes, selection, config, project, progress, tree_read, check)
    results, parsed = run_file_passes(*run)
    outcomes.extend(outcome for result in results for outcome in result.outcomes)
    changed = [result.path for result in results if result.new_source is not None]
    report = TreeReport(outcomes, file_skips, changed, len(files), parsed, project)
    source = read_source(src, files, config) if tree_passes else None
    modules = _file_pass_trees(src, results, tree_read)
    for index, transform in enumerate(tree_passes):
        selected = [f for f in files if f in selection[transform]]
        modules.expect(frozenset(selected), _selected_by(selection, tree_passes[index + 1 :]))
        _apply_tree_transform(out, selected, transform, config, report, source, modules)
    if tree_passes:
        report.tree_parses = {"parsed": modules.parses, "reused": modules.hits}
    if config.check_interpreters:
        replay = None if check == "grammar" else grammar_replay(src, results, file_passes, selection, config, project)
        check_other_interpreters(src, out, report, replay)
    return report


def _selected_by(selection: dict[str, set[str]], transforms: list[str]) -> frozenset[str]:
    return frozenset().union(*(selection[t] for t in transforms))


def _file_pass_trees(src: Path, results: list[FileResult], tree_read: frozenset[str]) -> ParsedModules:
    """The variant's parsed modules for its tree transforms, starting with the trees file passes made in this
    process (one worker): a file's output tree, or its own parse where no site changed."""
    modules = ParsedModules()
    modules.expect(frozenset(), tree_read)
    for result in results:
        if result.module is not None:
            data = result.new_source if result.new_source is not None else (src / result.path).read_bytes()
            modules.keep(result.path, data, result.module, result.emission)
            result.module = result.emission = None  # held by `modules` alone, while a tree transform will read it
    return modules


TREE_ORDER = {"constant-externalization": 0, "proxy-imports": 1, "runtime-target-masking": 2}
"""Tree transforms run in this order whatever order they were asked in: masking wraps a module
that already carries the other perturbations (as RepoMirage does), and no transform ever sees a
forwarder, proxy or resource that another generated (those are not in the source file list)."""


def _tree_order(transform: str) -> int:
    return TREE_ORDER.get(get_transform_class(transform).id, 1)


def _apply_tree_transform(
    out: Path,
    selected: list[str],
    transform: str,
    config: ApplyConfig,
    report: TreeReport,
    source: SourceFacts,
    modules: ParsedModules,
) -> None:
    """Run one RepoMirage-style transform over the selected modules of the (already written) variant."""
    if why := refusal(transform, report.project.unparsed, report.project.min_python):
        report.outcomes.extend(Skipped(transform, rel, why) for rel in selected)
        return
    instance = get_transform(transform)
    ctx = TreeContext(
        instance.id,
        out,
        rng_for(config.seed, instance.id, "<tree>"),
        report.project,
        config.fraction,
        dict(config.options.get(instance.id, {})),
        _taken_names(out),
        vocabulary=avoiding(source.vocabulary, report.project.absent_words),
        modules=modules,
        listed=source.listed,
        links=source.links,
        read_by_name=source.read_by_name,
    )
    with cyclic_gc_deferred():  # it holds modules' trees while it parses more: full collections walked them all
        instance.apply_tree(ctx, selected)
    report.outcomes.extend(ctx.outcomes)
    report.resolution.extend(ctx.resolution)
    written = {rel for rel in ctx.committed if (out / rel).is_file()}  # JSON resources too: every file written
    report.tree_written |= written
    report.changed_files = sorted(r for r in set(report.changed_files) | written if (out / r).is_file())  # moved away


def _taken_names(root: Path) -> set[str]:
    """Every file and folder stem in the tree: generated module names must collide with none."""
    return {p.name.split(".")[0] for p in root.rglob("*")}


def _usable_passes(config: ApplyConfig) -> tuple[list[str], list[Outcome]]:
    usable, outcomes = [], []
    for transform in config.transforms:
        if get_transform_class(transform).keyword_bound and not config.keywords_for(transform):
            outcomes.append(Skipped(transform, "*", "no keyword: this transform inserts a keyword; pass --keyword"))
        else:
            usable.append(transform)
    return usable, outcomes
