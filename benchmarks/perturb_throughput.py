"""Throughput of 3-transform variants on sympy 1.13.3, as ratios to LibCST parse+emit.

Everything is measured in this one run on this machine: the baseline is LibCST parsing and
re-emitting every selected non-test module (single process, and on `--workers` cores; best of
`--rounds`), each variant is `apply_tree` at phi = 0.7 over all files (file fraction 1.0) on the
same cores, including the tree copy and the cross-interpreter compile checks (best of `--rounds`).
`--draws N` times the trios drawn with seeds `--seed` .. `--seed + N - 1` (the benchmark's draw:
3 of the 14 SPTs) and reports each ratio, the worst and the median. Each draw's ratio is to a floor
timed right before it (the load of a shared machine drifts over the run); the ratio to the run's first
floor is reported beside it. Every transform's module is imported before any timing: an import is paid once per
process, not per variant (libcst.matchers alone takes 0.6 s), and the first draw would carry it. `--files K` keeps
K evenly spaced modules for a quicker run (the report says how many). Usage:

    python benchmarks/perturb_throughput.py [--seed 0] [--draws 10] [--transforms a b c] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst as cst
from timing import best, best_with_cpu

from repoanchor.evals.harness.projects import fetch_sdist
from repoanchor.perturb.source.files import python_files
from repoanchor.perturb.speed.bigstack import run_with_big_stack
from repoanchor.perturb.transforms import SPT_IDS, get_transform_class
from repoanchor.perturb.tree import ApplyConfig, apply_tree


def _round_trip(path: str) -> int:
    def work():
        return len(cst.parse_module(Path(path).read_bytes()).bytes)

    return run_with_big_stack(work)


def baseline(paths: list[str], workers: int) -> None:
    if workers == 1:
        for path in paths:
            _round_trip(path)
    else:
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_round_trip, paths, chunksize=8))


def _output_cost(pair: tuple[str, str]) -> tuple[float, float]:
    """CPU seconds of the floor for one file (parse + emit its input) and of its bound (parse its input, emit and
    compile its output); parsing the output is not counted: a tool writing it holds its tree."""

    def work():
        source, output = Path(pair[0]).read_bytes(), Path(pair[1]).read_bytes()
        start = time.process_time()
        tree = cst.parse_module(source)
        parsed = time.process_time()
        round_trip = tree.bytes
        emitted = time.process_time()
        if round_trip != source:
            raise AssertionError(f"{pair[0]}: LibCST did not give back the file's bytes")
        written = cst.parse_module(output)
        held = time.process_time()
        emitted_output = written.bytes
        compile(emitted_output, pair[1], "exec", dont_inherit=True)
        return emitted - start, (parsed - start) + (time.process_time() - held)

    return run_with_big_stack(work)


def output_bound(root: Path, variant: Path, files: list[str], workers: int) -> float:
    """Σ bound / Σ floor over `files` in CPU seconds (see `_output_cost`), on `workers` processes."""
    pairs = [(str(root / rel), str(variant / rel)) for rel in files]
    with ProcessPoolExecutor(workers) as pool:
        costs = list(pool.map(_output_cost, pairs, chunksize=8))
    return sum(bound for _, bound in costs) / sum(floor for floor, _ in costs)


def subset_tree(root: Path, files: list[str], keep: int, dest: Path) -> tuple[Path, list[str]]:
    """`root` itself, or a copy holding `keep` evenly spaced modules (and the package files they sit in)."""
    if keep <= 0 or keep >= len(files):
        return root, files
    chosen = files[:: len(files) // keep][:keep]
    for rel in chosen:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, dest / rel)
    return dest, python_files(dest)[0]


def time_draw(
    root: Path, files: list[str], transforms: list[str], seed: int, workers: int, rounds: int
) -> tuple[float, float, int, float]:
    """(wall s, CPU s, files changed, `output_bound` of the output)."""
    config = ApplyConfig(transforms, fraction=0.7, keywords=["simplify", "solve"], seed=seed, workers=workers)
    changed = []
    with tempfile.TemporaryDirectory() as scratch:
        variant = Path(scratch) / "variant"

        def job():
            shutil.rmtree(variant, ignore_errors=True)  # the last round's output stays for the bound
            changed[:] = apply_tree(root, variant, config).changed_files

        seconds, cpu = best_with_cpu(rounds, job)
        return seconds, cpu, len(changed), output_bound(root, variant, files, workers)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--transforms", nargs="*", help="one fixed trio instead of the seeded draws")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="best of this many timings each")
    parser.add_argument("--files", type=int, default=0, help="keep this many modules (0 = all)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as subset:
        source = fetch_sdist("sympy", "1.13.3")
        root, files = subset_tree(source, python_files(source)[0], args.files, Path(subset))
        return report(root, files, args)


def report(root: Path, files: list[str], args) -> dict:
    paths = [str(root / f) for f in files]
    for transform in SPT_IDS:
        get_transform_class(transform)  # imported once, before any timing (see the module docstring)
    base_1 = best(args.rounds, lambda: baseline(paths, 1))
    base_n = best(args.rounds, lambda: baseline(paths, args.workers))
    seeds = [args.seed] if args.transforms else range(args.seed, args.seed + args.draws)
    draws = []
    for seed in seeds:
        trio = args.transforms or random.Random(seed).sample(list(SPT_IDS), 3)
        # The floor again, right before its draw: other tenants' load drifts over a run of many minutes.
        floor, floor_cpu = best_with_cpu(args.rounds, lambda: baseline(paths, args.workers))
        seconds, cpu, changed, bound = time_draw(root, files, trio, seed, args.workers, args.rounds)
        draws.append(
            {
                "seed": seed,
                "transforms": trio,
                "files_changed": changed,
                "variant_s": round(seconds, 2),
                "floor_s": round(floor, 2),
                "ratio": round(seconds / floor, 3),
                "ratio_to_first_floor": round(seconds / base_n, 3),
                "cpu_ratio": round(cpu / floor_cpu, 3),
                "bound_ratio": round(bound, 3),
            }
        )
        print(json.dumps(draws[-1]), file=sys.stderr, flush=True)
    ratios = [d["ratio"] for d in draws]
    cpu_ratios = [d["cpu_ratio"] for d in draws]
    result = {
        "project": "sympy 1.13.3",
        "files": len(files),
        "workers": args.workers,
        "baseline_parse_emit_1_core_s": round(base_1, 2),
        f"baseline_parse_emit_{args.workers}_cores_s": round(base_n, 2),
        "draws": draws,
        f"worst_ratio_vs_{args.workers}_core_baseline": max(ratios),
        f"median_ratio_vs_{args.workers}_core_baseline": round(statistics.median(ratios), 3),
        "worst_cpu_ratio": max(cpu_ratios),
        "median_cpu_ratio": round(statistics.median(cpu_ratios), 3),
        "worst_bound_ratio": max(d["bound_ratio"] for d in draws),
    }
    json.dump(result, sys.stdout, indent=2)
    print()
    return result


if __name__ == "__main__":
    main()
