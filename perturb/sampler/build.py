"""Build sampled variants: apply each plan, give it a fresh one-commit history, record everything;
`sample` runs a whole batch of Algorithm 1 (one process per variant with `workers`).

The tree goes to OUTDIR/<id>/ and its metadata to OUTDIR/<id>.json, beside the tree and never
inside it: the seed, plan, keywords, gold files and issue digest are ground truth an agent must
not see. A variant that fails is removed (no half-built tree is left to be mistaken for a good
one) and its metadata records the error; the batch goes on.
"""

from __future__ import annotations

import shutil
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path

from repoanchor.perturb.metadata import tool_version, variant_metadata, write_metadata
from repoanchor.perturb.sampler.keywords import KeywordConfig, extract_keywords
from repoanchor.perturb.sampler.sampler import (
    Batch,
    SamplerConfig,
    VariantPlan,
    assign_target_names,
    draw_plan,
    prepare,
)
from repoanchor.perturb.source.files import source_files
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.variant_git import CommitIdentity, init_single_commit

FORMAT = "repoanchor.sampled-variant/1"


def apply_config(batch: Batch, plan: VariantPlan, file_workers: int = 0) -> ApplyConfig:
    """The plan as `apply_tree` input: p_file per transform, Nf caps, gold targets, bound keywords."""
    config = batch.config
    passes = keyword_passes(plan, config.keyword_passes)
    return ApplyConfig(
        transforms=[name for names in passes.values() for name in names],
        fraction=config.phi,
        targets=list(batch.gold),
        seed=plan.seed,
        include_tests=False,
        workers=file_workers,
        check_interpreters=config.check_interpreters,
        file_fractions={name: plan.p_file[t] for t, names in passes.items() for name in names},
        max_files={name: config.nf for t in plan.keyword_bound for name in passes[t]},
        options={t: dict(config.options[t]) for t in plan.transforms if t in config.options},
        transform_keywords={name: words for t in plan.keyword_bound for name, words in _bound(plan, t, passes[t])},
        test_patterns=tuple(config.test_patterns),
    )


def keyword_passes(plan: VariantPlan, mode: str) -> dict[str, list[str]]:
    """Each drawn transform's passes: itself, or with `per-keyword` one `ID@i` per keyword of a keyword-bound
    transform (the pass label keys its own file draw and Nf cap; a transform with no keyword keeps one pass,
    which is skipped with that reason)."""
    passes = {t: [t] for t in plan.transforms}
    if mode == "per-keyword":
        for t in plan.keyword_bound:
            words = plan.keywords.get(t, [])
            passes[t] = [f"{t}@{i}" for i in range(len(words))] if words else [t]
    return passes


def _bound(plan: VariantPlan, transform: str, names: list[str]) -> list[tuple[str, list[str]]]:
    words = list(plan.keywords.get(transform, []))
    return [(names[0], words)] if names == [transform] else [(n, [w]) for n, w in zip(names, words, strict=True)]


def build_variant(batch: Batch, plan: VariantPlan, file_workers: int = 0) -> dict:
    """Write the variant and its metadata; the metadata (with `ok` and `error`) is returned."""
    out = batch.outdir / plan.id
    meta = base_metadata(batch, plan)
    existed = out.exists() or out.is_symlink()
    try:
        config = apply_config(batch, plan, file_workers)
        report = apply_tree(batch.src, out, config)
        identity = CommitIdentity()
        commit = init_single_commit(out, identity, expect=source_files(batch.src))
    except Exception as exc:  # recorded, never raised: one bad variant must not stop the batch
        if not existed:
            shutil.rmtree(out, ignore_errors=True)
        return record_failure(batch, meta, exc)
    meta["ok"] = True
    meta["apply"] = variant_metadata(batch.src, config, report)
    meta["git"] = {"commit": commit, **asdict(identity)}
    write_metadata(batch.outdir / f"{plan.id}.json", meta)
    return meta


def record_failure(batch: Batch, meta: dict, exc: BaseException) -> dict:
    """Write the metadata of a variant that could not be built (also used when its worker died)."""
    meta["error"] = f"{type(exc).__name__}: {exc}"
    meta["traceback"] = "".join(traceback.format_exception(exc))
    write_metadata(batch.outdir / f"{meta['variant_id']}.json", meta)
    return meta


def base_metadata(batch: Batch, plan: VariantPlan) -> dict:
    return {
        "format": FORMAT,
        "tool_version": tool_version(),
        "variant_id": plan.id,
        "index": plan.index,
        "variant_seed": plan.seed,
        "source": str(batch.src),
        "sampler": batch.config.model_dump(mode="json"),
        "plan": plan.to_dict(),
        "keyword_extraction": batch.keywords.to_dict() if batch.keywords and plan.keyword_bound else None,
        "gold_files": batch.gold,
        "gold_files_ignored": batch.gold_ignored,
        "issue_sha256": batch.issue_sha256,
        "ok": False,
        "error": None,
    }


def summary_row(meta: dict) -> dict:
    """One line of the batch summary printed at the end."""
    apply = meta.get("apply") or {}
    return {
        "variant_id": meta["variant_id"],
        "index": meta["index"],
        "ok": meta["ok"],
        "transforms": meta["plan"]["transforms"],
        "files_changed": len(apply.get("files_changed", [])),
        "error": meta["error"],
    }


def sample(
    src: Path,
    outdir: Path,
    config: SamplerConfig,
    *,
    issue: str | None = None,
    keyword_config: KeywordConfig | None = None,
    workers: int = 1,
    on_done: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Build `config.n` variants under `outdir`; their metadata, in index order. A variant that fails
    is recorded (`error` in its metadata) and the batch continues."""
    batch = prepare(src, outdir, config, issue)
    plans = [draw_plan(config, i) for i in range(config.n)]
    if any(p.keyword_bound for p in plans):  # lines 12-13: one extraction per instance, only if needed
        batch.keywords = extract_keywords(issue, keyword_config)
        for plan in plans:
            assign_target_names(plan, batch.keywords, config.nk)
    batch.outdir.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    if workers <= 1:
        for plan in plans:
            results.append(build_variant(batch, plan, file_workers=0))
            if on_done:
                on_done(results[-1])
    else:
        taken = {p.id for p in plans if (batch.outdir / p.id).exists() or (batch.outdir / p.id).is_symlink()}
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(build_variant, batch, plan, 1): plan for plan in plans}
            for future in as_completed(futures):
                try:
                    results.append(future.result())
                except Exception as exc:  # the worker itself died (memory, signal): still recorded
                    plan = futures[future]
                    if plan.id not in taken:  # its half-written tree must not pass for a variant
                        shutil.rmtree(batch.outdir / plan.id, ignore_errors=True)
                    results.append(record_failure(batch, base_metadata(batch, plan), exc))
                if on_done:
                    on_done(results[-1])
    return sorted(results, key=lambda meta: meta["index"])
