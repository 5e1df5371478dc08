"""Throughput of a 3-transform variant on sympy 1.13.3, as a ratio to LibCST parse+emit.

Everything is measured in this one run on this machine: the baseline is LibCST parsing and
re-emitting every non-test module (single process, and on all cores), the variant is
`apply_tree` at phi = 0.7 over all files (file fraction 1.0) on all cores, including the tree
copy and the cross-interpreter compile checks. Usage:

    python benchmarks/perturb_throughput.py [--seed 0] [--transforms a b c] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst as cst

from repoanchor.evals.harness.projects import fetch_sdist
from repoanchor.perturb.engine import run_with_big_stack
from repoanchor.perturb.files import python_files
from repoanchor.perturb.transforms import SPT_IDS
from repoanchor.perturb.tree import ApplyConfig, apply_tree


def _round_trip(path: str) -> int:
    def work():
        return len(cst.parse_module(Path(path).read_bytes()).bytes)

    return run_with_big_stack(work)


def baseline(paths: list[str], workers: int) -> float:
    start = time.perf_counter()
    if workers == 1:
        for path in paths:
            _round_trip(path)
    else:
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_round_trip, paths, chunksize=8))
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--transforms", nargs="*", help="default: 3 drawn from the 14 SPTs with --seed")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    root = fetch_sdist("sympy", "1.13.3")
    files, _ = python_files(root)
    paths = [str(root / f) for f in files]
    transforms = args.transforms or random.Random(args.seed).sample(list(SPT_IDS), 3)
    base_1 = baseline(paths, 1)
    base_n = baseline(paths, args.workers)
    with tempfile.TemporaryDirectory() as tmp:
        config = ApplyConfig(
            transforms, fraction=0.7, keywords=["simplify", "solve"], seed=args.seed, workers=args.workers
        )
        start = time.perf_counter()
        report = apply_tree(root, Path(tmp) / "variant", config)
        variant = time.perf_counter() - start
    result = {
        "project": "sympy 1.13.3",
        "files": len(files),
        "transforms": transforms,
        "workers": args.workers,
        "files_changed": len(report.changed_files),
        "baseline_parse_emit_1_core_s": round(base_1, 2),
        f"baseline_parse_emit_{args.workers}_cores_s": round(base_n, 2),
        "variant_s": round(variant, 2),
        "ratio_vs_1_core_baseline": round(variant / base_1, 3),
        f"ratio_vs_{args.workers}_core_baseline": round(variant / base_n, 3),
    }
    json.dump(result, sys.stdout, indent=2)
    print()
    return result


if __name__ == "__main__":
    main()
