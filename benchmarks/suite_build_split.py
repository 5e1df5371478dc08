"""Where a suite build's time goes per real instance: perturbation and bookkeeping against the test runs.

Builds the `--suite` (default perturb) of each `--instances` id of a SWE-bench dataset from a repository cache
(folders named owner__name, e.g. `git clone https://github.com/pallets/flask repos/pallets__flask`), one
instance at a time, `--rounds` times into fresh folders (the first round also builds the test venv, which the
`environment` stage holds, and imports the transforms), and prints each round's stages from the manifest
(`timing.instance_stages`) with the ratio issue 19 part 6 asks about: (perturbation + bookkeeping) / tests, the
test runs being the floor (the target is under 0.2), and `summary`: each instance's median stages and ratio over
the rounds after the first (file creation and deletion, much of the bookkeeping, vary from round to round on a
shared disk). The level-1 import check is its own stage and reported beside it. Prints JSON.

    python benchmarks/suite_build_split.py --repo-cache REPOS [--instances pallets__flask-5014] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from repoanchor.evals.suites.build import build_suite
from repoanchor.evals.suites.selection import Selection

VERIFIED = Path(__file__).resolve().parents[2] / "shared" / "data" / "swebench" / "SWE-bench_Verified_test.parquet"


def split(stages: dict[str, float], total: float | None = None) -> dict:
    """The stages with the part-6 ratios (None where no test ran), and the instance's `total` seconds (work done
    beside the test runs, as V' is, shortens it without showing in any stage)."""
    tests = stages.get("tests", 0.0)
    overhead = stages.get("perturbation", 0.0) + stages.get("bookkeeping", 0.0)
    return {
        **stages,
        "total": round(total, 3) if total is not None else None,
        "overhead_to_tests": round(overhead / tests, 3) if tests else None,
        "imports_to_tests": round(stages.get("imports", 0.0) / tests, 3) if tests else None,
    }


def summary(rounds: list[dict]) -> dict:
    """Per instance, the median of each stage and of the ratios over `rounds` (and how many there were)."""
    per_instance: dict[str, list[dict]] = {}
    for one in rounds:
        for instance, stages in one["instances"].items():
            per_instance.setdefault(instance, []).append(stages)
    return {
        instance: {key: _median([s[key] for s in seen if s.get(key) is not None]) for key in seen[0]}
        | {"rounds": len(seen)}
        for instance, seen in per_instance.items()
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def build_round(dataset: Path, suite: str, instances: str, repo_cache: Path, venv_cache: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="repoanchor-split-") as scratch:
        out = Path(scratch) / "suite"
        report = build_suite(
            dataset, suite, out, repo_cache=repo_cache, cache_dir=venv_cache, progress=False,
            selection=Selection(instances=instances),
        )  # fmt: skip
        manifest = json.loads((out / "manifest.json").read_text())
    stages, totals = manifest["timing"]["instance_stages"], manifest["timing"]["instance_seconds"]
    return {
        "tasks": report.tasks,
        "rejected": report.rejected,
        "instances": {instance: split(seconds, totals.get(instance)) for instance, seconds in sorted(stages.items())},
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=VERIFIED)
    parser.add_argument("--suite", default="perturb", choices=["perturb", "spt", "extend"])
    parser.add_argument("--instances", default="pallets__flask-5014", help="ids 'a,b' (as suite build takes)")
    parser.add_argument("--repo-cache", type=Path, default=os.environ.get("REPOANCHOR_REPO_CACHE"))
    parser.add_argument("--venv-cache", type=Path, default=Path.home() / ".cache" / "repoanchor" / "venvs")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    if args.repo_cache is None or not Path(args.repo_cache).is_dir():
        parser.error("--repo-cache (or REPOANCHOR_REPO_CACHE): a folder of clones named owner__name")
    rounds = [
        build_round(args.dataset, args.suite, args.instances, args.repo_cache.resolve(), args.venv_cache)
        for _ in range(args.rounds)
    ]
    result = {"suite": args.suite, "dataset": str(args.dataset), "cores": os.cpu_count(), "rounds": rounds}
    result["summary"] = summary(rounds[1:] or rounds)
    json.dump(result, sys.stdout, indent=1)
    print()
    return result


if __name__ == "__main__":
    main()
