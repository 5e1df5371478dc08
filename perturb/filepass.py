"""The file-scope passes of `apply_tree`: which files each transform selects, one job per selected file,
jobs run in worker processes, each changed file written into the variant.

Only files that at least one transform selects are read and parsed. Each worker runs the per-file
engine (engine.transform_source) in a large-stack thread; a batch of under four files runs in this
process. Each file's draw for a transform is seeded by (seed, transform, file).
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.engine import FileResult, OutputCheck, PassSpec, rng_for, transform_source
from repoanchor.perturb.results import Outcome
from repoanchor.perturb.speed.bigstack import run_with_big_stack
from repoanchor.perturb.transforms import get_transform_class

if TYPE_CHECKING:
    from repoanchor.perturb.tree import ApplyConfig
    from repoanchor.perturb.validation.crosscheck import Replay


def select_files(files: list[str], transform: str, config: ApplyConfig) -> set[str]:
    """Targets always; every other file with probability p_file; at most `max_files` in all."""
    p_file = config.file_fractions.get(transform, config.file_fraction)
    targets = [rel for rel in files if rel in config.targets]
    others = [
        rel
        for rel in files
        if rel not in config.targets and rng_for(config.seed, transform, rel, "file").random() < p_file
    ]
    cap = config.max_files.get(transform)
    if cap is not None and len(targets) + len(others) > cap:
        rng = rng_for(config.seed, transform, "<cap>")
        others = sorted(rng.sample(others, max(0, cap - len(targets))))
    return set(targets) | set(others)


def run_file_passes(
    src: Path,
    out: Path,
    files: list[str],
    passes: list[str],
    selection: dict[str, set[str]],
    config: ApplyConfig,
    project: ProjectInfo,
    progress=None,
    keep_trees: frozenset[str] = frozenset(),
    check: OutputCheck = "grammar",
) -> tuple[list[FileResult], int]:
    """Run the file-scope `passes` over the files each selects; write every changed file into `out`.
    Returns each parsed file's result and how many files were parsed. A result keeps its final tree
    (`FileResult.module`) only for a file in `keep_trees` transformed in this process. `check`: see
    `engine.transform_source`."""
    jobs = [job for rel in files if (job := _job_for(src, rel, passes, selection, config, check))]
    results = _run_jobs(jobs, project, config.workers, progress, keep_trees)
    for result in results:
        if result.new_source is not None:
            _write_inside(out, result.path, result.new_source)
    return results, len(jobs)


@dataclass(frozen=True)
class _Job:
    path: str
    source: bytes
    passes: list[PassSpec]
    seed: int | str
    fraction: float
    keep_tree: bool = False
    check: OutputCheck = "grammar"


def _job_for(
    src: Path,
    rel: str,
    passes: list[str],
    selection: dict[str, set[str]],
    config: ApplyConfig,
    check: OutputCheck = "grammar",
) -> _Job | None:
    chosen = [
        PassSpec(t, tuple(config.keywords_for(t)) if get_transform_class(t).keyword_bound else ())
        for t in passes
        if rel in selection[t]
    ]
    if not chosen:
        return None
    return _Job(rel, (src / rel).read_bytes(), chosen, config.seed, config.fraction, check=check)


def grammar_replay(
    src: Path,
    results: list[FileResult],
    passes: list[str],
    selection: dict[str, set[str]],
    config: ApplyConfig,
    project: ProjectInfo,
) -> Replay:
    """For files of `results` that a real interpreter rejects (`crosscheck`): their passes run again, on the
    workers, with each output compiled here and parsed under the oldest grammar, so that a pass that fails is
    rolled back alone; each with its outcomes of `results`. A project declaring an older Python than its code runs on
    has every changed file rejected: they are replayed at once, as the passes ran."""
    outcomes = {result.path: result.outcomes for result in results}

    def replay(rels: list[str]) -> dict[str, tuple[list[Outcome], FileResult]]:
        chosen = [rel for rel in rels if rel in outcomes]
        jobs = [job for rel in chosen if (job := _job_for(src, rel, passes, selection, config, "grammar"))]
        replayed = _run_jobs(jobs, project, config.workers, None, frozenset())
        return {result.path: (outcomes[result.path], result) for result in replayed}

    return replay


_worker_project: ProjectInfo | None = None
"""The ProjectInfo of the jobs a worker process runs: sent once per worker (`_hold_project`), not with each
batch of jobs (sympy's class index takes 38 ms to unpickle, and `map` sends 55 batches)."""


def _hold_project(project: ProjectInfo) -> None:
    global _worker_project
    _worker_project = project


def _run_pooled_job(job: _Job) -> FileResult:
    return _run_job(job, _worker_project)


def _run_job(job: _Job, project: ProjectInfo) -> FileResult:
    return run_with_big_stack(
        transform_source,
        job.source,
        job.path,
        job.passes,
        seed=job.seed,
        fraction=job.fraction,
        project=project,
        keep_tree=job.keep_tree,
        check=job.check,
    )


def _run_jobs(
    jobs: list[_Job], project: ProjectInfo, workers: int, progress, keep_trees: frozenset[str]
) -> list[FileResult]:
    """In a worker process a result never keeps its tree, which would cost more to send than to parse again."""
    workers = workers or os.cpu_count() or 1
    results: list[FileResult] = []
    if workers == 1 or len(jobs) < 4:
        iterator = (_run_job(replace(job, keep_tree=job.path in keep_trees), project) for job in jobs)
        pool = None
    else:
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_hold_project, initargs=(project,))
        iterator = pool.map(_run_pooled_job, jobs, chunksize=max(1, min(16, len(jobs) // (workers * 8))))
    try:
        for result in iterator:
            results.append(result)
            if progress:
                progress(len(results), len(jobs))
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    return results


def _write_inside(out: Path, rel: str, data: bytes) -> None:
    target = out / rel
    if target.is_symlink() or not target.resolve().is_relative_to(out):
        raise RuntimeError(f"refusing to write {rel}: it resolves outside the output tree")
    target.write_bytes(data)
