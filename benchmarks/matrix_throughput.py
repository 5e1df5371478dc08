"""Matrix units per minute: the local pool vs a two-node Ray cluster of this machine, on the same cores, in one run.

The same matrix (the test suite's bug-repository tasks, plain condition, the scripted oracle on 127.0.0.1, runs on
the host) runs on `LocalPool(2)` and on `RayExecutor` over two one-CPU Ray nodes started here (tests/support/
ray_cluster.py), so the ratio is what distribution costs: bundles sent, archives returned, Ray's scheduling.
Each executor first runs a two-unit warm-up on other tasks (its workers import litellm and mini-swe-agent once),
timed apart as start-up; the timed matrix then starts warm, bundling its own tasks. Prints JSON.

    python benchmarks/matrix_throughput.py [--tasks 4] [--repeats 10]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from repoanchor.evals.runs.executor_ray import RayExecutor  # noqa: E402
from repoanchor.evals.runs.executors import LocalPool  # noqa: E402
from repoanchor.evals.runs.matrix import MatrixConfig  # noqa: E402
from repoanchor.evals.runs.run_matrix import run_matrix  # noqa: E402
from repoanchor.scaffolds.models.scripted_server import ScriptedServer  # noqa: E402
from tests.support.matrix_suite import make_suite, oracle, write_config  # noqa: E402
from tests.support.ray_cluster import local_cluster  # noqa: E402


def timed_matrix(config: MatrixConfig, executor) -> float:
    start = time.perf_counter()
    summary = run_matrix(config, executor=executor, progress=False)
    elapsed = time.perf_counter() - start
    if summary.statuses["done"] != summary.units:
        raise RuntimeError(f"not every unit ran to an ending: {summary.statuses}")
    return elapsed


def measure(make_executor, warm: MatrixConfig, timed: MatrixConfig) -> dict:
    start = time.perf_counter()
    with make_executor() as executor:
        timed_matrix(warm, executor)
        startup = time.perf_counter() - start
        seconds = timed_matrix(timed, executor)
    units = len(list((timed.out / "units").glob("*/result.json")))
    return {
        "startup_s": round(startup, 2),
        "matrix_s": round(seconds, 2),
        "units_per_minute": round(60 * units / seconds, 1),
    }


def configs(root: Path, api_base: str, name: str, repeats: int) -> tuple[MatrixConfig, MatrixConfig]:
    """The warm-up on a suite of its own (so the timed matrix bundles its tasks itself), and the timed matrix."""
    plain = {"conditions": [{"name": "plain"}]}
    warm = MatrixConfig.load(write_config(root / "warm" / f"{name}.yaml", api_base, repeats=1, **plain))
    timed = MatrixConfig.load(write_config(root / f"{name}.yaml", api_base, repeats=repeats, **plain))
    return warm.model_copy(update={"out": root / "warm" / name}), timed.model_copy(update={"out": root / name})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0123456789")  # litellm wants one, even for a local server
    results = {}
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(responder=oracle) as server:
        root = Path(tmp)
        make_suite(root, count=args.tasks)
        make_suite(root / "warm", count=2)
        warm, timed = configs(root, server.base_url, "pool", args.repeats)
        results["pool_2_workers"] = measure(lambda: LocalPool(2), warm, timed)
        with local_cluster(2) as (cluster, _):
            warm, timed = configs(root, server.base_url, "ray", args.repeats)
            results["ray_2_nodes"] = measure(lambda: RayExecutor(address=cluster.address), warm, timed)
    pool, ray = results["pool_2_workers"], results["ray_2_nodes"]
    results["units"] = args.tasks * args.repeats
    results["ray_over_pool_time"] = round(ray["matrix_s"] / pool["matrix_s"], 2)
    # Two units run at once on either: the extra wall time, times two, is what one unit pays to travel.
    results["ray_extra_ms_per_unit"] = round(2000 * (ray["matrix_s"] - pool["matrix_s"]) / results["units"])
    results["cores"] = os.cpu_count()
    results["load_average_1m"] = round(os.getloadavg()[0], 1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
