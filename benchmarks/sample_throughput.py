"""Sampler throughput on click 8.1.7: 20 variants, each timed against LibCST parse+emit of its files.

For every variant the sampler's build is timed end to end (tree copy, transforms, compile checks
under the other installed Pythons, the fresh one-commit git history, metadata) and divided by
the time LibCST takes to parse and re-emit the files that variant changed, in the same process
on one core (each file's parse+emit is measured once in this run and summed per variant). A
variant that changed no file has no ratio. Prints JSON. Usage:

    python benchmarks/sample_throughput.py [--n 20] [--seed 0] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import libcst as cst

from repoanchor.evals.harness.projects import fetch_sdist
from repoanchor.perturb.metadata import variant_metadata, write_metadata
from repoanchor.perturb.sampler.build import apply_config
from repoanchor.perturb.sampler.keywords import extract_keywords
from repoanchor.perturb.sampler.sampler import SamplerConfig, assign_target_names, draw_plan, prepare
from repoanchor.perturb.source.files import python_files
from repoanchor.perturb.speed.bigstack import run_with_big_stack
from repoanchor.perturb.tree import apply_tree
from repoanchor.perturb.variant_git import init_single_commit

ISSUE = """`Option` with `multiple=True` ignores `default` when `envvar` is set.

`click.Option.resolve_envvar_value()` returns a string; `value_from_envvar` should split it.
The error says "Missing option" although the variable is set.
"""
GOLD = ["src/click/core.py"]


def parse_emit_seconds(path: Path) -> float:
    start = time.perf_counter()
    run_with_big_stack(lambda: cst.parse_module(path.read_bytes()).bytes)
    return time.perf_counter() - start


def build_timed(batch, plan, workers: int) -> dict:
    """The steps of `sample_build.build_variant`, timed one by one."""
    out = batch.outdir / plan.id
    config = apply_config(batch, plan, workers)
    t0 = time.perf_counter()
    report = apply_tree(batch.src, out, config)
    t1 = time.perf_counter()
    init_single_commit(out)
    t2 = time.perf_counter()
    write_metadata(batch.outdir / f"{plan.id}.json", variant_metadata(batch.src, config, report))
    t3 = time.perf_counter()
    return {"report": report, "apply_s": t1 - t0, "git_s": t2 - t1, "total_s": t3 - t0}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="file workers per variant (1 = one core)")
    args = parser.parse_args(argv)
    root = fetch_sdist("click", "8.1.7")
    files, _ = python_files(root)
    config = SamplerConfig(n=args.n, seed=args.seed, gold_files=GOLD)
    rows = []
    parse_cache: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        batch = prepare(root, Path(tmp), config, ISSUE)
        plans = [draw_plan(config, i) for i in range(config.n)]
        batch.keywords = extract_keywords(ISSUE)
        for plan in plans:
            assign_target_names(plan, batch.keywords, config.nk)
            try:
                timed = build_timed(batch, plan, args.workers)
            except Exception as exc:  # a broken variant is reported, the benchmark goes on
                rows.append({"variant_id": plan.id, "transforms": plan.transforms, "error": repr(exc)[:300]})
                continue
            touched = timed["report"].changed_files
            for rel in touched:
                source = root / rel if (root / rel).is_file() else Path(tmp) / plan.id / rel
                parse_cache.setdefault(rel, parse_emit_seconds(source))
            baseline = sum(parse_cache[rel] for rel in touched)
            rows.append(
                {
                    "variant_id": plan.id,
                    "transforms": plan.transforms,
                    "files_parsed": timed["report"].files_parsed,
                    "files_changed": len(touched),
                    "variant_s": round(timed["total_s"], 3),
                    "apply_s": round(timed["apply_s"], 3),
                    "git_s": round(timed["git_s"], 3),
                    "parse_emit_touched_s": round(baseline, 3),
                    "ratio": round(timed["total_s"] / baseline, 2) if baseline else None,
                }
            )
    built = [r for r in rows if "error" not in r]
    ratios = [r["ratio"] for r in built if r["ratio"] is not None]
    result = {
        "project": "click 8.1.7",
        "python_files": len(files),
        "variants": len(rows),
        "failed": len(rows) - len(built),
        "workers_per_variant": args.workers,
        "keywords": batch.keywords.to_dict(),
        "total_s": round(sum(r["variant_s"] for r in built), 2),
        "mean_variant_s": round(statistics.mean(r["variant_s"] for r in built), 3) if built else None,
        "ratio_median": round(statistics.median(ratios), 2) if ratios else None,
        "ratio_mean": round(statistics.mean(ratios), 2) if ratios else None,
        "ratio_max": max(ratios, default=None),
        "variants_without_changes": len(built) - len(ratios),
        "rows": rows,
    }
    json.dump(result, sys.stdout, indent=2)
    print()
    return result


if __name__ == "__main__":
    main()
