"""The demo's report: grade the matrices, then outcomes and trajectories into one markdown/HTML report.

Outcome tables are `repoanchor results`' (Perturb, Extend, conditions, Jagged Frontier, effort, drift, every
unit counted), also written on their own under `report/results/`. The trajectory analysis reads the matrix
folders as `repoanchor analyze` does: its groups are `<suite>/<scaffold>/<model>/<condition>`, the condition
part the matrix's own name (as in the results tables), so scaffolds are never pooled; anchored units
contribute both stages' trajectories. An oracle run's label is stamped on every figure and heads the methods.
"""

from __future__ import annotations

from pathlib import Path

from repoanchor.evals.analysis.analyze import analyze
from repoanchor.evals.analysis.results.write import compute_results, save_results
from repoanchor.evals.runs.grade_runs import grade_matrix
from repoanchor.evals.runs.matrix import MatrixConfig


def delta_pairs(model: str, scaffold: str = "mini-swe-agent") -> list[tuple[str, str]]:
    """Δp heatmaps for the comparisons the demo is about (every pair of its groups would be dozens)."""

    def group(suite: str, condition: str) -> str:
        return f"{suite}/{scaffold}/{model}/{condition}"

    return [
        (group("original", "plain"), group("perturb", "plain")),
        (group("original", "plain"), group("spt", "plain")),
        (group("perturb", "plain"), group("perturb", "anchor")),
        (group("perturb", "plain"), group("perturb", "plain+hints")),
    ]


def write_demo_report(configs: list[MatrixConfig], out: Path, note: str) -> dict:
    # The demo's policy is the trusted oracle, and the demo needs no Docker engine: grades run on the host.
    for config in configs:
        grade_matrix(config, provider="local")
    label = note if note.startswith("MODEL: ORACLE") else None
    results = compute_results([Path(config.out) for config in configs], label=label)
    save_results(results, out / "results", header=note, title="RepoAnchor demo results")
    models = sorted({model.name for config in configs for model in config.models})
    summary = analyze(
        [Path(config.out) for config in configs],
        out,
        n_boot=500,
        header=f"{note} {results.counts_line()} Tables and CSVs alone: results/results.html.",
        extra_tables=results.shown(),
        figures=results.figures,
        delta_pairs=[pair for model in models for pair in delta_pairs(model)],
        label=label,
        methods=results.methods(),
    )
    return {"results": results, "html": summary["files"].get("report.html"), "summary": summary}
