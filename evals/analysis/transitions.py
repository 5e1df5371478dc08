"""Transition probabilities p(a→b) between step phases, with bootstrap CIs, and Δp between two conditions.

STEPS.md: within one run, steps whose phase is not in `phases` are dropped (`other` by default) and every
consecutive pair of the remaining sequence is one transition; p(a→b) = #(a→b) / Σ_s #(a→s), pooled over the
runs of a condition. Runs are the unit of resampling, since steps within a run are not independent; the two
stages of a RepoAnchor run, or the trajectories of one matrix unit, are resampled together (the steps frame's
`unit` column): transitions are still counted within each trajectory, never across stages.

Bootstraps work on per-unit count matrices: a replicate is a multinomial draw of how often each unit (or,
when paired, each instance) is picked, so n_boot replicates are one matrix product instead of n_boot Python loops.
Each condition draws from its own generator seeded by (seed, crc32(condition)), so a condition's CIs do not
change when other conditions are added. Percentile intervals (`stats_bootstrap.percentile_interval`); a
replicate with no transition out of `a` has no p(a→·) and is left out of that row's interval.
`stats_bootstrap.clustered_bootstrap` is not used: it rebuilds a frame per replicate for one scalar, and a
matrix with an empty row (NaN p) is a normal outcome here, not an error.
"""

from __future__ import annotations

import zlib
from itertools import combinations

import numpy as np
import pandas as pd

from repoanchor.evals.analysis.stats_bootstrap import percentile_interval

PHASES = ("explore", "edit", "test")
TRANSITION_COLUMNS = ("condition", "from", "to", "p", "low", "high", "n", "count", "runs", "units")
DELTA_COLUMNS = (
    "condition_a", "condition_b", "from", "to", "p_a", "p_b", "delta", "low", "high", "n_a", "n_b",
    "pairing", "instances",
)  # fmt: skip


def run_counts(steps: pd.DataFrame, phases: tuple[str, ...] = PHASES) -> tuple[list[str], np.ndarray]:
    """(run ids, counts[run, a, b]) of consecutive kept phases within each run, in step order."""
    return _counts(steps, phases, "run")


def unit_counts(steps: pd.DataFrame, phases: tuple[str, ...] = PHASES) -> tuple[list[str], np.ndarray]:
    """(unit ids, counts[unit, a, b]): `run_counts` summed over the runs of each unit (the `unit` column; each
    run its own unit without one)."""
    return _counts(steps, phases, "unit" if "unit" in steps.columns else "run")


def _counts(steps: pd.DataFrame, phases: tuple[str, ...], unit: str) -> tuple[list[str], np.ndarray]:
    index = {phase: i for i, phase in enumerate(phases)}
    kept = steps[steps["phase"].isin(phases)].sort_values(["run", "step_index"], kind="stable")
    units = sorted(steps[unit].unique())
    position = {name: i for i, name in enumerate(units)}
    counts = np.zeros((len(units), len(phases), len(phases)))
    codes = kept["phase"].map(index).to_numpy(dtype=np.int64)
    same_run = kept["run"].to_numpy()[1:] == kept["run"].to_numpy()[:-1]
    rows = kept[unit].map(position).to_numpy(dtype=np.int64)[1:][same_run]
    np.add.at(counts, (rows, codes[:-1][same_run], codes[1:][same_run]), 1)
    return units, counts


def _probabilities(counts: np.ndarray) -> np.ndarray:
    """Row-normalise the last two axes; a row with no transitions gives NaN, not 0."""
    totals = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, counts / np.where(totals > 0, totals, 1), np.nan)


def _interval(replicates: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell percentile interval over axis 0 of the defined replicates (NaN when none is defined)."""
    cells = [percentile_interval(replicates[(slice(None), *cell)], level) for cell in np.ndindex(replicates.shape[1:])]
    low, high = (np.array(side, dtype=float).reshape(replicates.shape[1:]) for side in zip(*cells, strict=True))
    return low, high


def _draws(rng: np.random.Generator, units: int, n_boot: int) -> np.ndarray:
    """How often each of `units` units is picked in each of `n_boot` resamples (with replacement)."""
    return rng.multinomial(units, np.full(units, 1 / units), size=n_boot).astype(float)


def _rng(seed: int, *names: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(name.encode()) for name in names)])


def _boot_p(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """p matrices of each replicate: weights[boot, unit] @ counts[unit, a, b]."""
    k = counts.shape[-1]
    return _probabilities((weights @ counts.reshape(len(counts), k * k)).reshape(-1, k, k))


def transition_table(
    steps: pd.DataFrame, *, phases: tuple[str, ...] = PHASES, seed: int = 0, n_boot: int = 1000, level: float = 0.95
) -> pd.DataFrame:
    """One row per (condition, from, to): p, its bootstrap CI, n = transitions out of `from`, count of a→b."""
    rows = []
    for condition in sorted(steps["condition"].unique()):
        own = steps[steps["condition"] == condition]
        units, counts = unit_counts(own, phases)
        total, runs = counts.sum(axis=0), own["run"].nunique()
        p = _probabilities(total)
        low, high = _interval(_boot_p(_draws(_rng(seed, condition), len(units), n_boot), counts), level)
        for i, a in enumerate(phases):
            for j, b in enumerate(phases):
                n = int(total[i].sum())
                rows.append([condition, a, b, p[i, j], low[i, j], high[i, j], n, int(total[i, j]), runs, len(units)])
    return pd.DataFrame(rows, columns=list(TRANSITION_COLUMNS))


def _instances(steps: pd.DataFrame) -> set[str]:
    return set(steps["instance_id"].dropna().unique())


def pairing_of(a: pd.DataFrame, b: pd.DataFrame, min_overlap: float = 0.5) -> list[str]:
    """The shared instances to pair on, or [] for an unpaired comparison.

    Paired when at least 2 instances are shared and they make up at least `min_overlap` of each condition's
    instances: then both conditions ran (mostly) the same tasks and within-instance differences are what we
    want. A small overlap would discard most of the data, so those comparisons stay unpaired.
    """
    shared, in_a, in_b = _instances(a) & _instances(b), _instances(a), _instances(b)
    if len(shared) >= 2 and len(shared) >= min_overlap * max(len(in_a), len(in_b)):
        return sorted(shared)
    return []


def _per_instance(steps: pd.DataFrame, instances: list[str], phases: tuple[str, ...]) -> np.ndarray:
    """counts[instance, a, b], summing the units (repeats) of each instance."""
    units, counts = unit_counts(steps, phases)
    unit = "unit" if "unit" in steps.columns else "run"
    instance_of = steps.drop_duplicates(unit).set_index(unit)["instance_id"]
    position = {instance: i for i, instance in enumerate(instances)}
    summed = np.zeros((len(instances), *counts.shape[1:]))
    for name, matrix in zip(units, counts, strict=True):
        if instance_of[name] in position:
            summed[position[instance_of[name]]] += matrix
    return summed


def delta_table(
    steps: pd.DataFrame,
    condition_a: str,
    condition_b: str,
    *,
    phases: tuple[str, ...] = PHASES,
    seed: int = 0,
    n_boot: int = 1000,
    level: float = 0.95,
    pairing: str = "auto",
) -> pd.DataFrame:
    """Δp = p_b(a→b) − p_a(a→b) per transition with a bootstrap CI.

    Paired (`pairing="auto"` and `pairing_of` finds shared instances, or `"paired"`): only the shared instances
    are used, and one draw of instances (with all their runs) is applied to both conditions. Unpaired: each
    condition's units are resampled independently. The `pairing` and `instances` columns say which was done.
    """
    a, b = steps[steps["condition"] == condition_a], steps[steps["condition"] == condition_b]
    for name, rows in ((condition_a, a), (condition_b, b)):
        if rows.empty:
            raise ValueError(f"no steps for condition {name!r}")
    shared = pairing_of(a, b, 0.0 if pairing == "paired" else 0.5) if pairing != "unpaired" else []
    if shared:
        counts_a, counts_b = _per_instance(a, shared, phases), _per_instance(b, shared, phases)
        weights = _draws(_rng(seed, condition_a, condition_b), len(shared), n_boot)
        boot_a, boot_b = _boot_p(weights, counts_a), _boot_p(weights, counts_b)
    else:
        counts_a, counts_b = unit_counts(a, phases)[1], unit_counts(b, phases)[1]
        rng_a, rng_b = _rng(seed, condition_a, condition_b, "a"), _rng(seed, condition_a, condition_b, "b")
        boot_a = _boot_p(_draws(rng_a, len(counts_a), n_boot), counts_a)
        boot_b = _boot_p(_draws(rng_b, len(counts_b), n_boot), counts_b)
    total_a, total_b = counts_a.sum(axis=0), counts_b.sum(axis=0)
    p_a, p_b = _probabilities(total_a), _probabilities(total_b)
    low, high = _interval(boot_b - boot_a, level)
    mode, instances = ("paired", len(shared)) if shared else ("unpaired", len(_instances(a) | _instances(b)))
    rows = [
        [condition_a, condition_b, x, y, p_a[i, j], p_b[i, j], p_b[i, j] - p_a[i, j], low[i, j], high[i, j],
         int(total_a[i].sum()), int(total_b[i].sum()), mode, instances]
        for i, x in enumerate(phases) for j, y in enumerate(phases)
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=list(DELTA_COLUMNS))


def all_deltas(steps: pd.DataFrame, pairs: list[tuple[str, str]] | None = None, **options) -> pd.DataFrame:
    """`delta_table` for the given (a, b) pairs present in `steps`, or for every pair of conditions (a before b
    in sorted order); empty with fewer than two."""
    conditions = sorted(steps["condition"].unique())
    chosen = combinations(conditions, 2) if pairs is None else [p for p in pairs if set(p) <= set(conditions)]
    tables = [delta_table(steps, a, b, **options) for a, b in chosen]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=list(DELTA_COLUMNS))
