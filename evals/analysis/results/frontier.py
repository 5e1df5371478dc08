"""Jagged Frontier tables: N baseline runs of each original vs its N variants × 1 run, per model × scaffold ×
dataset × condition and perturbed suite, with the paper's per-instance intervals.

Degradation d_i = baseline rate − mean per-variant rate (positive: the variants are harder); the estimate
is the mean over instances with a percentile bootstrap over instances and a sign-flip p
(`stats_frontier.jagged_frontier`). Per-instance intervals are Newcombe's hybrid score interval for two
independent proportions (they exist when each variant ran once); with 20/20 baseline vs 20/20 variants it
is ±16.1 points. Runs without an outcome (infrastructure errors, crashes) are dropped and counted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repoanchor.evals.analysis.results.tables import INFRA, MODEL_KEY, PERTURBED_KINDS
from repoanchor.evals.analysis.stats_frontier import jagged_frontier

KEY = [*MODEL_KEY, "dataset", "condition"]
N_RESAMPLES, SEED = 10_000, 0
NOTE = (
    "Degradation = baseline rate − mean per-variant rate, averaged over instances (positive: worse on the "
    f"variants). Interval: percentile bootstrap over instances ({N_RESAMPLES:,}, seed {SEED}); p: sign-flip "
    "test over instances. Per-instance intervals: Newcombe hybrid score (independent arms), one run per variant."
)


def _outcomes(rows: pd.DataFrame) -> pd.DataFrame:
    """resolved as 1/0 for graded units, NaN for infra errors and crashes (dropped and counted), others out."""
    kept = rows[rows["graded"] | rows["status"].isin(INFRA)]
    return kept.assign(resolved=kept["resolved"].where(kept["graded"]).astype(float))


def frontier_tables(units: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per model × scaffold × dataset × condition × perturbed suite, the per-instance rows)."""
    summary, instances = [], []
    units = units.assign(dataset=units.groupby("source_instance")["dataset"].transform("first"))
    for key, group in units.groupby(KEY, sort=True):
        labels = dict(zip(KEY, key, strict=True))
        baseline = _outcomes(group[group["suite_kind"] == "original"])
        for kind in PERTURBED_KINDS:
            variants = _outcomes(group[group["suite_kind"] == kind])
            shared = set(baseline["source_instance"]) & set(variants["source_instance"])
            if not shared:
                continue
            try:
                result = jagged_frontier(
                    baseline, variants, instance_col="source_instance", variant_col="variant",
                    n_resamples=N_RESAMPLES, seed=SEED,
                )  # fmt: skip
            except ValueError as error:  # every shared instance lacks valid runs on one side: say so, go on
                summary.append({**labels, "suite": kind, "instances": 0, "note": str(error)})
                continue
            table = result.per_instance
            excludes_zero = int(((table["low"] > 0) | (table["high"] < 0)).sum())
            summary.append(
                {
                    **labels,
                    "suite": kind,
                    "instances": len(table),
                    "baseline_runs": int(table["baseline_runs"].sum()),
                    "variants": int(table["variants"].sum()),
                    "degradation": result.degradation,
                    "low": result.low,
                    "high": result.high,
                    "p_sign_flip": result.p_value,
                    "instance_intervals": int(table["low"].notna().sum()),
                    "instance_intervals_excluding_zero": excludes_zero,
                    "infra_excluded_runs": result.infra_excluded_runs,
                    "excluded_instances": len(result.excluded),
                }
            )
            instances.append(table.assign(**labels, suite=kind, half_width=(table["high"] - table["low"]) / 2))
    per_instance = pd.concat(instances, ignore_index=True) if instances else pd.DataFrame()
    if len(per_instance):
        order = [*KEY, "suite", *[c for c in per_instance.columns if c not in (*KEY, "suite")]]
        per_instance = per_instance[order]
    return pd.DataFrame(summary), per_instance


def forest_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """(comparison, estimate, low, high) for the forest plot: one line per frontier estimate."""
    if summary.empty:
        return pd.DataFrame(columns=["comparison", "estimate", "low", "high"])
    label = summary.apply(lambda r: f"{r['model']} / {r['scaffold']} / {r['dataset']} / {r['condition']}: "
                          f"{r['suite']}", axis=1)  # fmt: skip
    return pd.DataFrame(
        {
            "comparison": label,
            "estimate": summary["degradation"].astype(float),
            "low": summary["low"].astype(float),
            "high": summary["high"].astype(float),
        }
    ).replace({np.inf: np.nan})
