"""The demo's report: grade the matrices, then outcomes and trajectories into one markdown/HTML report.

Outcome tables are `repoanchor results`' (Perturb, Extend, conditions, Jagged Frontier, effort, drift, every
unit counted), also written on their own under `report/results/`. Conditions in the trajectory analysis
are `<suite>/<condition>` (e.g. `perturb/anchor`); anchored runs contribute both stages' trajectories.
"""

from __future__ import annotations

from pathlib import Path

from repoanchor.evals.analysis.analyze import analyze
from repoanchor.evals.analysis.results.write import compute_results, save_results
from repoanchor.evals.runs.grade_runs import grade_matrix
from repoanchor.evals.runs.matrix import MatrixConfig, expand
from repoanchor.evals.runs.run_matrix import RESULT, UNITS, read_result

# Δp heatmaps for the comparisons the demo is about (every pair of the conditions would be dozens).
DELTA_PAIRS = [
    ("original/plain", "perturb/plain"),
    ("original/plain", "spt/plain"),
    ("perturb/plain", "perturb/anchor"),
    ("perturb/plain", "perturb/plain+hints"),
]


def trajectory_conditions(configs: list[MatrixConfig]) -> dict[str, str]:
    """Each unit's final run folder -> "<suite>/<condition>" for the step analysis."""
    mapping = {}
    for config in configs:
        root = Path(config.out) / UNITS
        for unit in expand(config):
            result = read_result(root / unit.unit_id / RESULT)
            if result and result.get("status") == "done":
                final = root / unit.unit_id / result["attempts"][-1]["dir"]
                mapping[str(final)] = f"{unit.suite}/{unit.condition}"
    return mapping


def write_demo_report(configs: list[MatrixConfig], out: Path, note: str) -> dict:
    # The demo's policy is the trusted oracle, and the demo needs no Docker engine: grades run on the host.
    for config in configs:
        grade_matrix(config, provider="local")
    label = note if note.startswith("MODEL: ORACLE") else None
    results = compute_results([Path(config.out) for config in configs], label=label)
    save_results(results, out / "results", header=note, title="RepoAnchor demo results")
    mapping = trajectory_conditions(configs)
    summary = analyze(
        [Path(p) for p in mapping],
        out,
        conditions=mapping,
        n_boot=500,
        header=f"{note} {results.counts_line()} Tables and CSVs alone: results/results.html.",
        extra_tables=results.shown(),
        figures=results.figures,
        delta_pairs=DELTA_PAIRS,
        label=label,
        methods=results.methods(),
    )
    return {"results": results, "html": summary["files"].get("report.html"), "summary": summary}
