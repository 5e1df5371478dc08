"""The demo's report: grade the matrix, then trajectories and outcomes into one markdown/HTML report.

Conditions in the trajectory analysis are `<suite>/<condition>` (e.g. `perturb/anchor`); anchored runs
contribute both stages' trajectories. Outcome tables: resolve rates (Wilson) per suite × scaffold ×
condition, and paired comparisons (Newcombe, McNemar mid-p, Holm) for the perturbation's effect and the
anchor's and hints' effects.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from repoanchor.evals.analysis.analyze import analyze
from repoanchor.evals.analysis.outcomes import comparisons, grades_frame, resolve_rates
from repoanchor.evals.analysis.report import markdown_table
from repoanchor.evals.harness.suite_format import read_suite_tasks
from repoanchor.evals.runs.grade_runs import grade_matrix
from repoanchor.evals.runs.matrix import MatrixConfig, expand
from repoanchor.evals.runs.run_matrix import RESULT, UNITS, read_result

# Δp heatmaps for the comparisons the demo is about (every pair of 8 conditions would be 28 heatmaps).
DELTA_PAIRS = [
    ("original/plain", "perturb/plain"),
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


def comparison_specs(frame: pd.DataFrame) -> list[tuple[str, str, str, dict]]:
    specs = []
    for scaffold in sorted(frame["scaffold"].unique()):
        specs.append(("suite", "original", "perturb", {"scaffold": scaffold, "condition": "plain"}))
        specs.append(("condition", "plain", "anchor", {"scaffold": scaffold, "suite": "perturb"}))
        specs.append(("condition", "plain", "plain+hints", {"scaffold": scaffold, "suite": "perturb"}))
    return specs


def write_demo_report(configs: list[MatrixConfig], suites: dict[str, Path], out: Path, note: str) -> dict:
    # The demo's policy is the trusted oracle, and the demo needs no Docker engine: grades run on the host.
    grades = [grade for config in configs for grade in grade_matrix(config, provider="local")]
    sources = {row.instance_id: row.repoanchor_source_instance for s in suites.values() for row in read_suite_tasks(s)}
    frame = grades_frame(grades, sources)
    rates = resolve_rates(frame, ["suite", "scaffold", "condition"])
    compared = comparisons(frame, comparison_specs(frame))
    mapping = trajectory_conditions(configs)
    summary = analyze(
        [Path(p) for p in mapping],
        out,
        conditions=mapping,
        n_boot=500,
        forest=compared if len(compared) else None,
        header=note,
        extra_tables=[("Resolve rates (Wilson 95% CI)", rates), ("Paired comparisons", compared)],
        delta_pairs=DELTA_PAIRS,
    )
    rates.to_csv(out / "resolve_rates.csv", index=False)
    compared.to_csv(out / "comparisons.csv", index=False)
    frame.to_csv(out / "grades.csv", index=False)
    return {
        "table": markdown_table(rates),
        "rates": rates,
        "html": summary["files"].get("report.html"),
        "summary": summary,
    }
