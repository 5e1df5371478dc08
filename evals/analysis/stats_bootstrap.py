"""Percentile bootstrap intervals that resample clusters (the Jagged Frontier estimator: `stats_frontier.py`).

Runs of one instance (or instances of one repository) are correlated, so intervals resample whole
clusters with replacement. Every draw comes from `numpy.random.SeedSequence(seed)`: the cluster draws
and the within-cluster draws use separate child streams, so the one- and two-level variants see the
same cluster draws for the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class BootstrapResult:
    estimate: float
    low: float
    high: float
    n_resamples: int
    n_invalid: int  # resamples whose statistic was NaN or infinite; left out of the interval, never hidden
    confidence: float


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of the finite values (NaN, NaN when there are none)."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return math.nan, math.nan
    alpha = 1.0 - confidence
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def check_bootstrap_settings(n_resamples: int, confidence: float) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")


def _cluster_strata(frame: pd.DataFrame, cluster_col: str, strata_col: str | None) -> list[list[np.ndarray]]:
    """Row positions per cluster, split by stratum (one stratum per cluster when strata_col is None)."""
    codes, _ = pd.factorize(frame[cluster_col], sort=True)
    if (codes < 0).any():
        raise ValueError(f"column {cluster_col!r} has missing cluster labels")
    order = np.argsort(codes, kind="stable")
    clusters = np.split(order, np.cumsum(np.bincount(codes))[:-1])
    if strata_col is None:
        return [[rows] for rows in clusters]
    labels = frame[strata_col].to_numpy()
    if pd.isna(labels).any():
        raise ValueError(f"column {strata_col!r} has missing stratum labels")
    return [[rows[labels[rows] == label] for label in pd.unique(labels[rows])] for rows in clusters]


def _prepared(frame: pd.DataFrame, cluster_col: str) -> pd.DataFrame:
    """The frame with `<cluster_col>_original` added, the label a statistic can still look up."""
    original = f"{cluster_col}_original"
    if original in frame.columns:
        raise ValueError(f"column {original!r} is reserved for the original cluster labels")
    return frame.reset_index(drop=True).assign(**{original: frame[cluster_col].to_numpy()})


def _sample_frame(prepared: pd.DataFrame, cluster_col: str, clusters: list[list[np.ndarray]]) -> pd.DataFrame:
    """The chosen rows; cluster_col becomes the draw number so a cluster drawn twice counts twice."""
    rows = [np.concatenate(strata) for strata in clusters]
    sample = prepared.iloc[np.concatenate(rows)].reset_index(drop=True)
    # isetitem replaces the column without pandas' slower label-based setitem path.
    sample.isetitem(prepared.columns.get_loc(cluster_col), np.repeat(np.arange(len(rows)), [r.size for r in rows]))
    return sample


def _bootstrap(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    cluster_col: str,
    settings: tuple[int, int, float],
    strata_col: str | None,
    within: bool,
) -> BootstrapResult:
    n_resamples, seed, confidence = settings
    check_bootstrap_settings(n_resamples, confidence)
    clusters = _cluster_strata(frame, cluster_col, strata_col)
    frame = _prepared(frame, cluster_col)
    estimate = float(statistic(_sample_frame(frame, cluster_col, clusters)))
    if not math.isfinite(estimate):
        raise ValueError(f"statistic is not finite on the full data: {estimate}")
    cluster_seed, row_seed = np.random.SeedSequence(seed).spawn(2)
    draws = np.random.default_rng(cluster_seed).integers(0, len(clusters), size=(n_resamples, len(clusters)))
    row_rng = np.random.default_rng(row_seed)
    values = np.empty(n_resamples)
    for index, drawn in enumerate(draws):
        chosen = [clusters[j] for j in drawn]
        if within:
            chosen = [[s[row_rng.integers(0, s.size, s.size)] for s in strata] for strata in chosen]
        values[index] = float(statistic(_sample_frame(frame, cluster_col, chosen)))
    low, high = percentile_interval(values, confidence)
    return BootstrapResult(estimate, low, high, n_resamples, int(np.sum(~np.isfinite(values))), confidence)


def clustered_bootstrap(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    cluster_col: str,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Percentile bootstrap resampling whole clusters (instances, repositories) with replacement.

    `statistic` receives a frame in which `cluster_col` holds the draw number (0..k-1) and
    `<cluster_col>_original` the label; a statistic that groups by a finer key (instances inside
    repositories) should group by [cluster_col, key] so a cluster drawn twice keeps both copies.
    """
    return _bootstrap(frame, statistic, cluster_col, (n_resamples, seed, confidence), None, within=False)


def two_level_bootstrap(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    cluster_col: str,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    strata_col: str | None = None,
) -> BootstrapResult:
    """Clusters with replacement, then rows (runs) with replacement inside each drawn cluster.

    `strata_col` (e.g. the condition) keeps each arm's run count fixed inside a cluster. Resampling
    both levels counts within-cluster noise twice, so this interval is conservative; prefer
    `clustered_bootstrap` unless clusters are few and runs many.
    """
    return _bootstrap(frame, statistic, cluster_col, (n_resamples, seed, confidence), strata_col, within=True)
