"""Analysis throughput on the shared trajectories, as a ratio to just loading their JSON, in one run.

Times (a) `json.loads` of every trajectory file, (b) reading + classifying into the step table
(`load_steps`), and (c) the whole `analyze` (step table, transition matrices with bootstrap CIs, Δp,
drift, report with plots), each the best of `--rounds`. Prints JSON with trajectories/s and the ratios.

    python benchmarks/analysis_throughput.py [--rounds 3] [--n-boot 1000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import best  # noqa: E402  (beside this script)

from repoanchor.evals.analysis.analyze import analyze  # noqa: E402
from repoanchor.evals.analysis.steps_frame import load_steps  # noqa: E402
from tests.support.shared import shared_path  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()
    folder = shared_path("data", "trajectories")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "resolved.json")
    if not files:
        raise SystemExit(f"no trajectories under {folder}")
    runs = len(load_steps([folder]).runs)
    load_s = best(args.rounds, lambda: [json.loads(p.read_text()) for p in files])
    steps_s = best(args.rounds, lambda: load_steps([folder]))
    with tempfile.TemporaryDirectory() as out:
        analyze_s = best(args.rounds, lambda: analyze([folder], Path(out), n_boot=args.n_boot))
    print(
        json.dumps(
            {
                "trajectories": runs,
                "json_load_s": round(load_s, 4),
                "step_table_s": round(steps_s, 4),
                "analyze_s": round(analyze_s, 4),
                "trajectories_per_s": {
                    "json_load": round(runs / load_s),
                    "step_table": round(runs / steps_s),
                    "analyze": round(runs / analyze_s, 1),
                },
                "ratio_to_json_load": {
                    "step_table": round(steps_s / load_s, 1),
                    "analyze": round(analyze_s / load_s, 1),
                },
                "n_boot": args.n_boot,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
