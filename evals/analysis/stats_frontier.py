"""The Jagged Frontier degradation estimator: mean over instances of (baseline rate - mean variant rate).

Instances are the unit: the percentile interval resamples instances (or their clusters, e.g. repositories),
and with `levels=2` also the runs and variants inside each drawn instance, seeded from
`numpy.random.SeedSequence(seed)` as `stats_bootstrap` is; the p-value is a sign-flip test over instances.
Runs without an outcome (infrastructure errors) are dropped and counted, never scored as failures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from repoanchor.evals.analysis.stats import newcombe_independent_interval, sign_flip_test
from repoanchor.evals.analysis.stats_bootstrap import check_bootstrap_settings, percentile_interval


@dataclass(frozen=True)
class FrontierResult:
    degradation: float  # mean over instances of (baseline rate - perturbed rate); positive = worse
    low: float
    high: float
    p_value: float  # sign-flip permutation test on the per-instance degradations
    per_instance: pd.DataFrame
    excluded: dict[str, str]  # instance -> why it is not in the estimate
    infra_excluded_runs: int  # runs with no outcome (infrastructure errors): dropped, never counted as failures
    n_resamples: int
    confidence: float


def _valid_runs(frame: pd.DataFrame, instance_col: str, outcome_col: str) -> tuple[pd.DataFrame, int]:
    missing = [c for c in (instance_col, outcome_col) if c not in frame.columns]
    if missing:
        raise ValueError(f"run frame lacks columns {missing}")
    valid = frame[frame[outcome_col].notna()].copy()
    valid[outcome_col] = valid[outcome_col].astype(float)
    if not valid[outcome_col].isin((0.0, 1.0)).all():
        raise ValueError(f"{outcome_col!r} must be boolean (or missing for an infrastructure error)")
    return valid, len(frame) - len(valid)


def _split_by(keys, values: np.ndarray) -> dict:
    """{key: values of that key} without a Python-level groupby loop (it dominated the run time)."""
    codes, labels = pd.factorize(np.asarray(keys), sort=True)
    order = np.argsort(codes, kind="stable")
    parts = np.split(values[order], np.cumsum(np.bincount(codes, minlength=len(labels)))[:-1])
    return dict(zip(labels.tolist(), parts, strict=True))


def _arms(baseline, variants, instance_col, variant_col, outcome_col):
    base, infra_base = _valid_runs(baseline, instance_col, outcome_col)
    pert, infra_pert = _valid_runs(variants, instance_col, outcome_col)
    if variant_col not in pert.columns:  # one row per variant: the N variants x 1 run design
        pert[variant_col] = np.arange(len(pert))
    base_runs = _split_by(base[instance_col], base[outcome_col].to_numpy())
    # Average per-variant rates, not pooled runs: the estimand is the mean over variants (paper, app. E).
    per_variant = pert.groupby([instance_col, variant_col])[outcome_col].agg(["mean", "size"])
    owners = per_variant.index.get_level_values(0)
    variant_rates = _split_by(owners, per_variant["mean"].to_numpy())
    runs_per_variant = _split_by(owners, per_variant["size"].to_numpy())
    one_run_each = {i: bool((sizes == 1).all()) for i, sizes in runs_per_variant.items()}
    return base_runs, variant_rates, one_run_each, infra_base + infra_pert


def _exclusions(base_runs, variant_rates, min_runs: int) -> dict[str, str]:
    reasons = {}
    for instance in sorted(set(base_runs) | set(variant_rates), key=str):
        n_base, n_var = len(base_runs.get(instance, ())), len(variant_rates.get(instance, ()))
        if min(n_base, n_var) < max(min_runs, 1):
            reasons[instance] = f"{n_base} valid baseline runs, {n_var} variants with a valid run (min_runs={min_runs})"
    return reasons


def _instance_row(instance, runs, rates, one_run_each, confidence) -> dict:
    baseline_rate, perturbed_rate = float(runs.mean()), float(rates.mean())
    low = high = math.nan  # Newcombe needs binomial counts: one run per variant (K = 1)
    if one_run_each:
        _, low, high = newcombe_independent_interval(
            int(runs.sum()), runs.size, int(rates.sum()), rates.size, confidence
        )
    return {
        "instance": instance,
        "baseline_runs": runs.size,
        "baseline_rate": baseline_rate,
        "variants": rates.size,
        "perturbed_rate": perturbed_rate,
        "degradation": baseline_rate - perturbed_rate,
        "low": low,
        "high": high,
    }


def _copies(cluster_index: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(n_resamples, instances): how often each instance is drawn when its cluster is resampled."""
    n_clusters = int(cluster_index.max()) + 1
    draws = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    counts = np.zeros((n_resamples, n_clusters), dtype=np.int64)
    np.add.at(counts, (np.arange(n_resamples)[:, None], draws), 1)
    return counts[:, cluster_index]


def _summed_resampled_means(values: np.ndarray, copies: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per resample: the sum over `copies` independent bootstrap means of `values` (each its own size)."""
    lengths = copies * values.size
    drawn = values[rng.integers(0, values.size, size=int(lengths.sum()))]
    cumulative = np.concatenate(([0.0], np.cumsum(drawn)))
    ends = np.cumsum(lengths)
    return (cumulative[ends] - cumulative[ends - lengths]) / values.size


def jagged_frontier(
    baseline: pd.DataFrame,
    variants: pd.DataFrame,
    *,
    instance_col: str = "instance_id",
    variant_col: str = "variant_id",
    outcome_col: str = "resolved",
    cluster_of: Mapping[str, str] | None = None,
    min_runs: int = 1,
    levels: int = 1,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> FrontierResult:
    """Jagged Frontier degradation: N baseline runs vs N variants x 1 run per instance.

    d_i = baseline rate - mean over variants of the per-variant rate; the estimate is the mean of d_i
    over instances. Interval: percentile bootstrap over instances (or over `cluster_of[instance]`,
    e.g. repositories); `levels=2` also redraws runs and variants inside each drawn instance from its
    own counts. Missing outcomes are infrastructure errors and are dropped; `min_runs` applies to the
    statistics themselves, and every excluded instance is reported with its reason. The p-value is the
    sign-flip test over instances (as in the paper's code), whatever `cluster_of` says.
    """
    check_bootstrap_settings(n_resamples, confidence)
    if levels not in (1, 2):
        raise ValueError(f"levels must be 1 or 2, got {levels}")
    base_runs, variant_rates, one_run_each, infra = _arms(baseline, variants, instance_col, variant_col, outcome_col)
    excluded = _exclusions(base_runs, variant_rates, min_runs)
    kept = sorted((set(base_runs) & set(variant_rates)) - set(excluded), key=str)
    if not kept:
        raise ValueError(f"no instance has both arms: {excluded}")
    table = pd.DataFrame([_instance_row(i, base_runs[i], variant_rates[i], one_run_each[i], confidence) for i in kept])
    if cluster_of is not None:
        unmapped = [i for i in kept if i not in cluster_of]
        if unmapped:
            raise ValueError(f"cluster_of has no cluster for {unmapped}")
        table.insert(1, "cluster", [cluster_of[i] for i in kept])
    resampled = _resampled_degradations(table, base_runs, variant_rates, levels, n_resamples, seed)
    low, high = percentile_interval(resampled, confidence)
    deltas = table["degradation"].to_numpy()
    p_value = sign_flip_test(deltas, seed=seed)
    return FrontierResult(float(deltas.mean()), low, high, p_value, table, excluded, infra, n_resamples, confidence)


def _resampled_degradations(table, base_runs, variant_rates, levels, n_resamples, seed) -> np.ndarray:
    """Mean degradation of each bootstrap resample (instances weigh equally, copies count twice)."""
    clusters = table["cluster"] if "cluster" in table.columns else table["instance"]
    top_seed, within_seed = np.random.SeedSequence(seed).spawn(2)
    copies = _copies(pd.factorize(clusters, sort=True)[0], n_resamples, np.random.default_rng(top_seed))
    if levels == 1:
        totals = np.einsum("bi,i->b", copies.astype(float), table["degradation"].to_numpy())
    else:
        # Each drawn copy redraws from its own instance's counts (the prior code used one modal n for all).
        rng = np.random.default_rng(within_seed)
        totals = sum(
            _summed_resampled_means(base_runs[i], copies[:, j], rng)
            - _summed_resampled_means(variant_rates[i], copies[:, j], rng)
            for j, i in enumerate(table["instance"])
        )
    return totals / copies.sum(axis=1)
