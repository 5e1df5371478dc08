"""Paired comparisons over graded units, the estimator of the results tables: pure pandas.

A comparison pairs the runs of one source instance (with scaffold and model) that differ in one factor
(suite: original vs perturbed; condition: plain vs anchor ...). The unit is the source instance: its
repeats and variants are not independent pairs. Where each instance has one run on each side, the
difference gets Newcombe's paired interval (method 10) and McNemar's mid-p; otherwise each instance's
resolve rates are averaged per side, and the mean per-instance difference gets a percentile bootstrap over
instances and a sign-flip p. The `estimator` column says which. Ungraded units (infrastructure errors,
crashes) are left out here; the results tables count them beside the rates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repoanchor.evals.analysis.stats import mcnemar_midp, newcombe_paired_interval, paired_counts, sign_flip_test
from repoanchor.evals.analysis.stats_bootstrap import percentile_interval

CLUSTER = ["source_instance", "scaffold", "model"]
"""The pairing unit: runs of one source instance, whatever their repeat or variant."""
N_RESAMPLES, SEED = 10_000, 0
BINARY = "Newcombe paired interval, McNemar mid-p (one run per instance and side)"
CLUSTERED = (
    f"mean per-instance difference; percentile bootstrap over instances ({N_RESAMPLES:,}, seed {SEED}); sign-flip p"
)


def matched_means(frame: pd.DataFrame, factor: str, first: str, second: str, within: dict, value: str) -> tuple:
    """(instances, per-instance means of `value` on each side, runs per side) over the instances with both."""
    rows = frame[frame[value].notna()]
    for column, wanted in within.items():
        rows = rows[rows[column] == wanted]
    a = rows[rows[factor] == first].groupby(CLUSTER)[value]
    b = rows[rows[factor] == second].groupby(CLUSTER)[value]
    shared = a.size().index.intersection(b.size().index)
    x = a.mean().loc[shared].astype(float).to_numpy()
    y = b.mean().loc[shared].astype(float).to_numpy()
    return shared, x, y, a.size().loc[shared].to_numpy(), b.size().loc[shared].to_numpy()


def paired_comparison(frame: pd.DataFrame, factor: str, first: str, second: str, within: dict) -> dict | None:
    """`second` minus `first` on `factor`, among rows matching `within`, paired on the source instance."""
    graded = frame[frame["graded"]]
    shared, x, y, runs_a, runs_b = matched_means(graded, factor, first, second, within, "resolved")
    if len(shared) == 0:
        return None
    label = ", ".join(f"{k}={v}" for k, v in within.items())
    row = {
        "comparison": f"{factor}: {second} − {first}" + (f" ({label})" if label else ""),
        "pairs": len(shared),
        "runs_first": int(runs_a.sum()),
        "runs_second": int(runs_b.sum()),
    }
    one_each = (runs_a == 1).all() and (runs_b == 1).all()
    return {**row, **(_binary(x, y) if one_each else clustered_difference(x, y))}


def _binary(x: np.ndarray, y: np.ndarray) -> dict:
    # Newcombe's difference is p(first argument) - p(second): pass the later condition first.
    both, only_second, only_first, neither = paired_counts(y.astype(bool).tolist(), x.astype(bool).tolist())
    difference, low, high = newcombe_paired_interval(both, only_second, only_first, neither)
    return {
        "rate_first": float(x.mean()), "rate_second": float(y.mean()), "estimate": difference, "low": low,
        "high": high, "discordant": f"{only_first}/{only_second}", "p_midp": mcnemar_midp(only_first, only_second),
        "estimator": BINARY,
    }  # fmt: skip


def clustered_difference(x: np.ndarray, y: np.ndarray) -> dict:
    """Mean of y - x over instances: percentile bootstrap over instances and a sign-flip p."""
    differences = y - x
    rng = np.random.default_rng(SEED)
    resampled = differences[rng.integers(0, len(differences), (N_RESAMPLES, len(differences)))].mean(axis=1)
    low, high = percentile_interval(resampled, 0.95)
    return {
        "rate_first": float(x.mean()), "rate_second": float(y.mean()), "estimate": float(differences.mean()),
        "low": low, "high": high, "discordant": f"{int((differences < 0).sum())}/{int((differences > 0).sum())}",
        "p_midp": sign_flip_test(differences.tolist(), seed=SEED), "estimator": CLUSTERED,
    }  # fmt: skip
