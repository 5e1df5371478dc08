"""Closed-form statistics for resolve rates: intervals, paired tests, multiplicity, pass@k.

Pure functions of counts or arrays; nothing here draws random numbers except `sign_flip_test`
(Monte Carlo only above `exact_limit` differences, from an explicit seed). Bootstrap intervals and
the Jagged Frontier estimator live in `stats_bootstrap.py` and `stats_frontier.py`.

Newcombe 1998a: Two-sided confidence intervals for the single proportion, Stat Med 17:857-872.
Newcombe 1998b: Interval estimation for the difference between independent proportions, Stat Med 17:873-890.
Newcombe 1998c: Improved confidence intervals for the difference between binomial proportions based on
paired data, Stat Med 17:2635-2650.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def _count(value: int, name: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for one proportion (Newcombe 1998a, method 3).

    n = 0 raises ValueError: with no trials there is no estimate, and a silent (0, 1) would let an
    empty cell pass for a measured one.
    """
    successes, n = _count(successes, "successes"), _count(n, "n")
    if n == 0:
        raise ValueError("wilson_interval needs n > 0 trials")
    if successes > n:
        raise ValueError(f"successes ({successes}) exceed n ({n})")
    z = _z(confidence)
    p = successes / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    low, high = (centre - half) / scale, (centre + half) / scale
    # At p = 0 or 1 the limit is exactly 0 or 1 in exact arithmetic; rounding would miss it.
    return (0.0 if successes == 0 else max(0.0, low)), (1.0 if successes == n else min(1.0, high))


def newcombe_independent_interval(
    successes_1: int, n_1: int, successes_2: int, n_2: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Hybrid score interval for p1 - p2 from independent samples (Newcombe 1998b, method 10).

    Returns (difference, low, high). For per-instance cells where the two arms are separate runs.
    """
    p1, p2 = successes_1 / _positive(n_1), successes_2 / _positive(n_2)
    l1, u1 = wilson_interval(successes_1, n_1, confidence)
    l2, u2 = wilson_interval(successes_2, n_2, confidence)
    diff = p1 - p2
    return diff, diff - math.hypot(p1 - l1, u2 - p2), diff + math.hypot(p2 - l2, u1 - p1)


def _positive(n: int) -> int:
    if _count(n, "n") == 0:
        raise ValueError("need n > 0 trials")
    return int(n)


def _corrected_phi(a: int, b: int, c: int, d: int) -> float:
    """Newcombe's continuity-corrected phi for the paired table; 0 when a margin is empty."""
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    if denominator == 0:
        return 0.0
    cross, half_n = a * d - b * c, (a + b + c + d) / 2
    if cross > half_n:
        return (cross - half_n) / math.sqrt(denominator)
    return 0.0 if cross >= 0 else cross / math.sqrt(denominator)


def newcombe_paired_interval(a: int, b: int, c: int, d: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """Hybrid score interval for a paired difference p1 - p2 (Newcombe 1998c, method 10).

    a: both succeed, b: first only, c: second only, d: neither. Returns (difference, low, high).
    """
    a, b, c, d = (_count(v, name) for v, name in zip((a, b, c, d), "abcd", strict=True))
    n = _positive(a + b + c + d)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_interval(a + b, n, confidence)
    l2, u2 = wilson_interval(a + c, n, confidence)
    phi = _corrected_phi(a, b, c, d)
    diff = (b - c) / n  # exact form of p1 - p2, so 10/50 is 0.2 and not 0.19999999999999996
    below = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return diff, max(-1.0, diff - below), min(1.0, diff + above)


def paired_counts(first: Sequence[bool], second: Sequence[bool]) -> tuple[int, int, int, int]:
    """(a, b, c, d) of two equally long outcome arrays, pair i being (first[i], second[i])."""
    x, y = _binary(first, "first"), _binary(second, "second")
    if x.shape != y.shape:
        raise ValueError(f"paired outcomes differ in length: {x.size} and {y.size}")
    return int(np.sum(x & y)), int(np.sum(x & ~y)), int(np.sum(~x & y)), int(np.sum(~x & ~y))


def newcombe_paired_interval_from_outcomes(
    first: Sequence[bool], second: Sequence[bool], confidence: float = 0.95
) -> tuple[float, float, float]:
    """`newcombe_paired_interval` on two arrays of paired outcomes (first minus second)."""
    return newcombe_paired_interval(*paired_counts(first, second), confidence=confidence)


def _binary(values: Sequence[bool], name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or not np.isin(array, (0, 1)).all():
        raise ValueError(f"{name} must be a 1-d array of booleans or 0/1 (missing outcomes removed first)")
    return array.astype(bool)


def _lower_tail_numerator(b: int, c: int) -> tuple[int, int, int]:
    """(sum of C(n, i) for i <= min(b, c), C(n, min(b, c)), 2**n) for n = b + c, in exact integers."""
    n, low = b + c, min(b, c)
    return sum(math.comb(n, i) for i in range(low + 1)), math.comb(n, low), 2**n


def mcnemar_exact(b: int, c: int) -> float:
    """Exact conditional McNemar p (two-sided binomial on the b + c discordant pairs)."""
    tail, _, total = _lower_tail_numerator(_count(b, "b"), _count(c, "c"))
    return min(1.0, 2 * tail / total)


def mcnemar_midp(b: int, c: int) -> float:
    """McNemar mid-p (Fagerland, Lydersen & Laake 2013): exact two-sided p minus P(X = b).

    Computed as twice the lower tail with half weight on the observed point, which equals
    exact - P(X = b) whenever b != c and is exactly 1 when b == c (b = c = 0 included). The book
    code of the same authors (R contingencytables) returns 1 - P(X = b)/2 in the b == c case instead.
    """
    tail, point, total = _lower_tail_numerator(_count(b, "b"), _count(c, "c"))
    return min(1.0, (2 * tail - point) / total)


def sign_flip_test(
    differences: Sequence[float], n_resamples: int = 100_000, seed: int = 0, exact_limit: int = 30
) -> float:
    """Two-sided sign-flip permutation p for mean(differences) = 0 (symmetric null).

    Zeros are left out: flipping them changes nothing. Exact (meet-in-the-middle, so 30 values cost
    milliseconds) up to `exact_limit` nonzero values; beyond that Monte Carlo from `seed` with the
    (count + 1) / (n + 1) correction.
    """
    values = np.asarray(differences, dtype=float)
    values = values[values != 0]
    if values.size == 0:
        return 1.0
    observed = abs(values.sum()) * (1 - 1e-12)  # tolerance so float ties count as "as extreme"
    if values.size <= exact_limit:
        return _exact_sign_flip(values, observed)
    rng = np.random.default_rng(seed)
    hits = sum(
        int(np.sum(np.abs(_signed_sums(rng.integers(0, 2, (size, values.size), dtype=np.int8), values)) >= observed))
        for size in _chunks(n_resamples, 1 << 14)
    )
    return (hits + 1) / (n_resamples + 1)


def _signed_sums(bits: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Row sums of values with sign +1 where bit is 1 and -1 where it is 0: 2 b.v - sum(v)."""
    # einsum, not @: on few cores BLAS gemv on tall thin matrices is ~10x slower here (measured).
    return np.einsum("ij,j->i", bits.astype(np.float64), 2 * values) - values.sum()


def _exact_sign_flip(values: np.ndarray, observed: float) -> float:
    """Share of all 2**m sign patterns at least as extreme, by meet-in-the-middle over two halves."""
    if observed == 0:
        return 1.0
    half = values.size // 2
    left, right = _all_signed_sums(values[:half]), np.sort(_all_signed_sums(values[half:]))
    at_or_above = right.size - np.searchsorted(right, observed - left, side="left")
    at_or_below = np.searchsorted(right, -observed - left, side="right")
    return float(np.sum(at_or_above + at_or_below)) / (left.size * right.size)


def _all_signed_sums(values: np.ndarray) -> np.ndarray:
    return _signed_sums((np.arange(1 << values.size)[:, None] >> np.arange(values.size)) & 1, values)


def _chunks(total: int, size: int) -> list[int]:
    return [min(size, total - start) for start in range(0, total, size)]


def _pvalue_array(pvalues: Sequence[float]) -> np.ndarray:
    array = np.asarray(pvalues, dtype=float)
    if array.ndim != 1 or np.isnan(array).any() or (array < 0).any() or (array > 1).any():
        raise ValueError("p-values must be a 1-d array of numbers in [0, 1]")
    return array


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values, in input order (monotone, capped at 1)."""
    p = _pvalue_array(pvalues)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (p.size - np.arange(p.size)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def benjamini_hochberg(pvalues: Sequence[float]) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (false discovery rate), in input order."""
    p = _pvalue_array(pvalues)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, p.size / np.arange(1, p.size + 1) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return adjusted


def _check_pass_counts(n: int, c: int, k: int) -> None:
    n, c, k = _count(n, "n"), _count(c, "c"), _count(k, "k")
    if k < 1:
        raise ValueError("k must be at least 1")
    if n < k:
        # Known pitfall (MultiPL-E discussion #58): the formula silently returns 1 or nonsense here.
        raise ValueError(f"pass@k needs n >= k samples, got n={n}, k={k}")
    if c > n:
        raise ValueError(f"c ({c}) exceeds n ({n})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), with c of n samples correct."""
    _check_pass_counts(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (tau-bench reliability): C(c, k) / C(n, k), the chance that k draws all succeed."""
    _check_pass_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)
