"""Statistics against published worked examples, brute force and known answers.

Sources of the published figures (each test names its own):
- Newcombe RG (1998a) Two-sided confidence intervals for the single proportion. Stat Med 17:857-872.
- Newcombe RG (1998b) Interval estimation for the difference between independent proportions.
  Stat Med 17:873-890, Table II.
- Newcombe RG (1998c) Improved confidence intervals for the difference between binomial proportions
  based on paired data. Stat Med 17:2635-2650, Table II.
  The four Table II rows below are the ones the R package propint (m-Py/propint,
  tests/testthat "results reported in Newcombe1998") checks; we did not read the paper's table itself.
- Fagerland MW, Lydersen S, Laake P (2013) The McNemar test for binary matched-pairs data: mid-p and
  asymptotic are better than exact conditional. BMC Med Res Methodol 13:91 (the Bentur et al. example),
  and the same authors' book "Statistical Analysis of Contingency Tables" (2017), chapter 8, whose
  figures for the Cavo et al. example are pinned by the R package contingencytables (tests/testthat/test-ch8.R).
- Jagged Frontier (arXiv 2608.18389), appendix D: with 20 runs per condition, perfect resolution in both
  conditions still has a +-16-point Newcombe interval.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from repoanchor.evals.analysis.stats import (
    benjamini_hochberg,
    holm,
    mcnemar_exact,
    mcnemar_midp,
    newcombe_independent_interval,
    newcombe_paired_interval,
    newcombe_paired_interval_from_outcomes,
    paired_counts,
    pass_at_k,
    pass_hat_k,
    sign_flip_test,
    wilson_interval,
)
from repoanchor.evals.analysis.stats_bootstrap import clustered_bootstrap, two_level_bootstrap
from repoanchor.evals.analysis.stats_frontier import jagged_frontier

# --- Wilson ---------------------------------------------------------------------------------------


# Newcombe 1998a, worked examples (method 3, score interval without continuity correction). The first
# two are also pinned by propint's tests; 0/20 and 1/29 are the figures the paper prints for its other
# two examples as given to us; they agree with the formula to 4 decimals.
@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_wilson_matches_newcombe_1998a(successes, n, low, high):
    assert wilson_interval(successes, n) == pytest.approx((low, high), abs=5e-5)


def test_wilson_edges_are_exact_and_empty_n_is_refused():
    assert wilson_interval(0, 7)[0] == 0.0
    assert wilson_interval(7, 7)[1] == 1.0
    with pytest.raises(ValueError, match="n > 0"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="exceed"):
        wilson_interval(5, 4)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 4, confidence=1.0)


def test_wilson_widens_with_confidence():
    narrow, wide = wilson_interval(30, 100, 0.90), wilson_interval(30, 100, 0.99)
    assert wide[0] < narrow[0] < 0.3 < narrow[1] < wide[1]


# --- Newcombe, independent and paired -------------------------------------------------------------


# Newcombe 1998b Table II (method 10), as pinned by propint's tests.
@pytest.mark.parametrize(
    ("x1", "n1", "x2", "n2", "low", "high"),
    [(56, 70, 48, 80, 0.0524, 0.3339), (9, 10, 3, 10, 0.1705, 0.8090)],
)
def test_newcombe_independent_matches_1998b(x1, n1, x2, n2, low, high):
    diff, lo, hi = newcombe_independent_interval(x1, n1, x2, n2)
    assert diff == pytest.approx(x1 / n1 - x2 / n2)
    assert (lo, hi) == pytest.approx((low, high), abs=5e-5)


def test_newcombe_independent_twenty_of_twenty_is_plus_minus_16_points():
    # Jagged Frontier app. D; the half-width is the Wilson upper limit of 0/20 (0.1611, Newcombe 1998a).
    diff, low, high = newcombe_independent_interval(20, 20, 20, 20)
    assert diff == 0.0
    assert (low, high) == pytest.approx((-0.1611, 0.1611), abs=5e-5)


# Newcombe 1998c Table II, method 10 (e = both, f = first only, g = second only, h = neither), as pinned
# by propint's tests. Row 2 needs the corrected phi: the plain phi gives 0.0618 to 0.3239 instead, and
# row 4 has an empty margin, where phi is 0.
@pytest.mark.parametrize(
    ("a", "b", "c", "d", "low", "high"),
    [
        (36, 12, 2, 0, 0.0569, 0.3404),
        (18, 12, 2, 18, 0.0562, 0.3290),
        (53, 0, 0, 1, -0.0729, 0.0729),
        (0, 30, 0, 0, 0.8395, 1.0),
    ],
)
def test_newcombe_paired_matches_1998c_table_ii(a, b, c, d, low, high):
    diff, lo, hi = newcombe_paired_interval(a, b, c, d)
    assert diff == (b - c) / (a + b + c + d)
    assert (lo, hi) == pytest.approx((low, high), abs=5e-5)


def test_newcombe_paired_matches_fagerland_book_cavo_example():
    # Cavo et al. 2012 (59, 6; 16, 80): estimate -0.0621, 95% CI -0.1186 to -0.0046 (contingencytables).
    diff, low, high = newcombe_paired_interval(59, 6, 16, 80)
    assert (diff, low, high) == pytest.approx((-0.0621, -0.1186, -0.0046), abs=5e-5)


@pytest.mark.parametrize("table", [(36, 12, 2, 0), (1, 1, 7, 12), (59, 6, 16, 80), (4, 0, 3, 9)])
def test_newcombe_paired_swapping_arms_mirrors_the_interval(table):
    a, b, c, d = table
    diff, low, high = newcombe_paired_interval(a, b, c, d)
    assert newcombe_paired_interval(a, c, b, d) == pytest.approx((-diff, -high, -low))


def test_paired_interval_from_outcome_arrays_equals_the_counts_version():
    first = [True] * 36 + [True] * 12 + [False] * 2
    second = [True] * 36 + [False] * 12 + [True] * 2
    assert paired_counts(first, second) == (36, 12, 2, 0)
    assert newcombe_paired_interval_from_outcomes(first, second) == newcombe_paired_interval(36, 12, 2, 0)
    with pytest.raises(ValueError, match="length"):
        paired_counts([True, False], [True])
    with pytest.raises(ValueError, match="booleans"):
        paired_counts([1, 2], [0, 1])


def test_newcombe_paired_refuses_empty_and_negative_tables():
    with pytest.raises(ValueError, match="n > 0"):
        newcombe_paired_interval(0, 0, 0, 0)
    with pytest.raises(ValueError, match="non-negative"):
        newcombe_paired_interval(1, -1, 0, 0)


# --- McNemar --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "c", "exact", "midp", "places"),
    [
        # Fagerland et al. 2013, Bentur et al. example: exact conditional 0.070, mid-p 0.039.
        (1, 7, 0.070, 0.039, 3),
        # Fagerland, Lydersen & Laake 2017 ch. 8, Cavo et al. example (contingencytables test-ch8.R).
        (6, 16, 0.052479, 0.034690, 6),
    ],
)
def test_mcnemar_matches_fagerland(b, c, exact, midp, places):
    assert round(mcnemar_exact(b, c), places) == exact
    assert round(mcnemar_midp(b, c), places) == midp


def _brute_force_tails(b: int, c: int) -> tuple[Fraction, Fraction, Fraction]:
    """P(more extreme), P(as extreme), P(X = b) for X ~ Binomial(b + c, 1/2), by enumeration."""
    n = b + c
    distance = abs(2 * b - n)
    more = as_extreme = Fraction(0)
    for x in range(n + 1):
        mass = Fraction(math.comb(n, x), 2**n)
        if abs(2 * x - n) > distance:
            more += mass
        elif abs(2 * x - n) == distance:
            as_extreme += mass
    return more, as_extreme, Fraction(math.comb(n, b), 2**n)


@pytest.mark.parametrize(("b", "c"), [(b, c) for b in range(9) for c in range(9) if b != c])
def test_mcnemar_midp_is_exact_minus_point_probability(b, c):
    more, as_extreme, point = _brute_force_tails(b, c)
    assert mcnemar_exact(b, c) == pytest.approx(float(more + as_extreme))
    assert mcnemar_midp(b, c) == pytest.approx(float(more + as_extreme - point))
    assert mcnemar_midp(b, c) == pytest.approx(float(more + as_extreme / 2))


@pytest.mark.parametrize("b", [0, 1, 5, 40])
def test_mcnemar_balanced_discordance_gives_one(b):
    assert mcnemar_exact(b, b) == 1.0
    assert mcnemar_midp(b, b) == 1.0


def test_mcnemar_midp_is_below_exact_and_handles_large_counts():
    assert mcnemar_midp(300, 380) < mcnemar_exact(300, 380) < 0.01


# --- multiplicity ---------------------------------------------------------------------------------


def test_holm_worked_example():
    # Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_and_bh_cap_at_one_and_keep_input_order():
    assert holm([0.9, 0.5]) == pytest.approx([1.0, 1.0])
    assert benjamini_hochberg([0.04, 0.01]) == pytest.approx([0.04, 0.02])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.2, 1.2])


def _holm_rejects(p: np.ndarray, alpha: float) -> set[int]:
    rejected = set()
    for rank, index in enumerate(np.argsort(p, kind="stable")):
        if p[index] > alpha / (p.size - rank):
            break
        rejected.add(int(index))
    return rejected


def _bh_rejects(p: np.ndarray, q: float) -> set[int]:
    order = np.argsort(p, kind="stable")
    passing = [rank for rank in range(p.size) if p[order[rank]] <= q * (rank + 1) / p.size]
    return {int(i) for i in order[: max(passing) + 1]} if passing else set()


@pytest.mark.parametrize("seed", range(5))
def test_adjusted_pvalues_reproduce_the_step_procedures_at_every_level(seed):
    p = np.random.default_rng(seed).uniform(0, 0.2, size=12) ** 2
    holm_adjusted, bh_adjusted = holm(p), benjamini_hochberg(p)
    for level in np.linspace(0.0005, 0.2, 60):
        assert _holm_rejects(p, level) == {i for i in range(p.size) if holm_adjusted[i] <= level}
        assert _bh_rejects(p, level) == {i for i in range(p.size) if bh_adjusted[i] <= level}


def test_bh_rejects_more_than_holm_on_benjamini_hochberg_1995_example():
    # The 15 p-values of the example in Benjamini & Hochberg (1995, JRSS B 57:289-300), as we recall them;
    # the rejection counts at 0.05 (4 for BH, 3 for the Bonferroni-type procedures) follow from the
    # definitions above and are what the paper reports.
    p = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240]
    p += [0.4262, 0.5719, 0.6528, 0.7590, 1.0]
    assert int(np.sum(benjamini_hochberg(p) <= 0.05)) == 4
    assert int(np.sum(holm(p) <= 0.05)) == 3


# --- pass@k ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k"), [(n, c, k) for n in range(1, 8) for c in range(n + 1) for k in sorted({1, min(2, n), n})]
)
def test_pass_at_k_equals_enumeration_over_all_k_subsets(n, c, k):
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(samples, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 5), (0, 0, 1), (4, 5, 2), (4, 1, 0)])
def test_pass_at_k_refuses_impossible_counts(n, c, k):
    with pytest.raises(ValueError):  # noqa: PT011 - several messages; the point is that it refuses
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):  # noqa: PT011
        pass_hat_k(n, c, k)


def test_pass_at_k_is_one_when_too_few_failures_to_fill_k():
    assert pass_at_k(10, 8, 3) == 1.0
    assert pass_at_k(200, 0, 10) == 0.0


# --- sign-flip test -------------------------------------------------------------------------------


def test_sign_flip_exact_small_cases():
    assert sign_flip_test([1.0, 1.0, 1.0]) == 0.25  # only all-plus or all-minus reach |sum| = 3
    assert sign_flip_test([0.0, 0.0]) == 1.0
    assert sign_flip_test([0.5, 0.0, -0.5]) == 1.0  # zeros dropped; observed sum 0 is the least extreme


@pytest.mark.parametrize("seed", range(4))
def test_sign_flip_exact_matches_enumeration(seed):
    values = np.random.default_rng(seed).normal(0.4, 1.0, size=9)
    observed = abs(values.sum())
    extreme = [abs(np.dot(signs, values)) >= observed - 1e-12 for signs in itertools.product((-1, 1), repeat=9)]
    assert sign_flip_test(values) == pytest.approx(np.mean(extreme))


def test_sign_flip_monte_carlo_agrees_with_exact_and_is_seeded():
    values = np.random.default_rng(3).normal(0.3, 1.0, size=14)
    exact = sign_flip_test(values)
    sampled = sign_flip_test(values, n_resamples=40_000, seed=7, exact_limit=4)
    assert sampled == pytest.approx(exact, abs=0.01)
    assert sampled == sign_flip_test(values, n_resamples=40_000, seed=7, exact_limit=4)


# --- clustered bootstrap --------------------------------------------------------------------------


def _mean_of(column: str):
    return lambda frame: float(frame[column].to_numpy().mean())


def _clustered_frame(n_clusters: int, rows_per_cluster: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cluster_effect = np.repeat(rng.normal(0.0, 1.0, n_clusters), rows_per_cluster)
    return pd.DataFrame(
        {
            "cluster": np.repeat([f"c{i}" for i in range(n_clusters)], rows_per_cluster),
            "x": 0.3 + cluster_effect + rng.normal(0.0, 0.5, n_clusters * rows_per_cluster),
        }
    )


def test_constant_statistic_has_zero_width():
    result = clustered_bootstrap(_clustered_frame(10, 3, 0), lambda frame: 4.2, "cluster", n_resamples=50)
    assert (result.estimate, result.low, result.high) == (4.2, 4.2, 4.2)
    assert (result.n_resamples, result.n_invalid, result.confidence) == (50, 0, 0.95)


def test_identical_clusters_give_the_plain_estimate():
    frame = pd.DataFrame({"cluster": np.repeat(np.arange(8), 3), "x": np.tile([1.0, 2.0, 6.0], 8)})
    result = clustered_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=200, seed=1)
    assert result.estimate == pytest.approx(3.0)
    assert (result.low, result.high) == pytest.approx((3.0, 3.0))


def test_copying_rows_inside_a_cluster_changes_nothing():
    # Clusters are the unit: k clusters of one row and the same k clusters of five identical rows
    # draw the same clusters for the same seed, so the mean (of cluster means) is identical.
    single = _clustered_frame(12, 1, 4)
    repeated = single.loc[single.index.repeat(5)].reset_index(drop=True)
    one = clustered_bootstrap(single, _mean_of("x"), "cluster", n_resamples=300, seed=9)
    five = clustered_bootstrap(repeated, _mean_of("x"), "cluster", n_resamples=300, seed=9)
    assert (five.estimate, five.low, five.high) == pytest.approx((one.estimate, one.low, one.high))


def test_bootstrap_is_deterministic_for_a_seed():
    frame = _clustered_frame(15, 2, 5)
    first = clustered_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=200, seed=3)
    assert clustered_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=200, seed=3) == first
    assert clustered_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=200, seed=4) != first


def test_a_cluster_drawn_twice_counts_twice_and_keeps_its_label():
    frame = _clustered_frame(6, 2, 0)
    seen: list[set] = []

    def distinct_draws(sample: pd.DataFrame) -> float:
        seen.append(set(sample["cluster_original"]))
        return float(sample["cluster"].nunique())

    result = clustered_bootstrap(frame, distinct_draws, "cluster", n_resamples=100, seed=2)
    assert (result.low, result.high) == (6.0, 6.0)
    assert all(labels <= set(frame["cluster"]) for labels in seen)
    assert any(len(labels) < 6 for labels in seen)  # some clusters were drawn more than once


def test_resamples_with_undefined_statistic_are_counted_not_hidden():
    frame = _clustered_frame(5, 2, 0)

    def needs_c0(sample: pd.DataFrame) -> float:
        return 1.0 if (sample["cluster_original"] == "c0").any() else math.nan

    result = clustered_bootstrap(frame, needs_c0, "cluster", n_resamples=400, seed=0)
    # P(c0 never drawn) = (4/5)^5 = 0.33; the remaining resamples define the interval.
    assert 80 < result.n_invalid < 190
    assert (result.low, result.high) == (1.0, 1.0)


def test_bootstrap_refuses_bad_input():
    frame = _clustered_frame(4, 2, 0)
    with pytest.raises(ValueError, match="not finite"):
        clustered_bootstrap(frame, lambda sample: math.nan, "cluster", n_resamples=10)
    with pytest.raises(ValueError, match="missing cluster"):
        clustered_bootstrap(frame.assign(cluster=None), _mean_of("x"), "cluster", n_resamples=10)
    with pytest.raises(ValueError, match="n_resamples"):
        clustered_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=0)
    with pytest.raises(ValueError, match="reserved"):
        clustered_bootstrap(frame.assign(cluster_original=1), _mean_of("x"), "cluster", n_resamples=10)


def test_clustered_interval_covers_the_true_mean_at_the_nominal_rate():
    # 50 data sets of 40 clusters x 2 rows with true mean 0.3; a 95% interval should cover about 47
    # (percentile intervals run slightly short at 40 clusters). The count's binomial sd is 1.6, so 42
    # or more is accepted; a bootstrap that ignored the clustering would cover far fewer.
    covered = 0
    for seed in range(50):
        result = clustered_bootstrap(_clustered_frame(40, 2, seed), _mean_of("x"), "cluster", 150, seed)
        covered += result.low <= 0.3 <= result.high
    assert covered >= 42


def test_two_level_adds_within_cluster_noise():
    # Every cluster holds the same runs {0, 1}: resampling clusters alone cannot move the mean,
    # resampling runs inside clusters can.
    frame = pd.DataFrame({"cluster": np.repeat(np.arange(10), 2), "x": np.tile([0.0, 1.0], 10)})
    one = clustered_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=300, seed=0)
    two = two_level_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=300, seed=0)
    assert one.low == one.high == 0.5
    assert two.low < 0.5 < two.high


def test_two_level_equals_one_level_for_single_row_clusters():
    frame = _clustered_frame(20, 1, 8)
    one = clustered_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=200, seed=6)
    two = two_level_bootstrap(frame, _mean_of("x"), "cluster", n_resamples=200, seed=6)
    assert (two.estimate, two.low, two.high) == (one.estimate, one.low, one.high)


def test_two_level_strata_keep_each_arm_size():
    frame = pd.DataFrame(
        {"cluster": np.repeat(np.arange(6), 5), "arm": np.tile(["base", "base", "pert", "pert", "pert"], 6)}
    )
    frame["x"] = np.random.default_rng(0).random(len(frame))
    result = two_level_bootstrap(
        frame, lambda s: float((s["arm"] == "base").mean()), "cluster", n_resamples=100, seed=1, strata_col="arm"
    )
    assert (result.low, result.high) == (0.4, 0.4)


# --- Jagged Frontier ------------------------------------------------------------------------------


def _runs(outcomes: dict[str, list], **columns) -> pd.DataFrame:
    rows = [{"instance_id": i, "resolved": v} for i, values in outcomes.items() for v in values]
    return pd.DataFrame(rows).assign(**columns)


def test_frontier_perfect_cell_has_the_papers_16_point_interval():
    result = jagged_frontier(_runs({"a": [True] * 20}), _runs({"a": [True] * 20}), n_resamples=100)
    row = result.per_instance.iloc[0]
    assert (row["baseline_runs"], row["variants"], row["degradation"]) == (20, 20, 0.0)
    assert (row["low"], row["high"]) == pytest.approx((-0.1611, 0.1611), abs=5e-5)


def test_frontier_is_the_mean_of_per_instance_differences():
    baseline = _runs({"a": [True, True, True, False], "b": [True, False, False, False]})
    variants = _runs({"a": [True, False, False, False, True], "b": [False, False]})
    result = jagged_frontier(baseline, variants, n_resamples=500)
    # a: 3/4 - 2/5 = 0.35; b: 1/4 - 0 = 0.25; instances weigh equally.
    assert result.per_instance["degradation"].tolist() == pytest.approx([0.35, 0.25])
    assert result.degradation == pytest.approx(0.30)
    assert 0.25 <= result.low <= result.high <= 0.35
    _, low, high = newcombe_independent_interval(3, 4, 2, 5)
    assert result.per_instance.iloc[0][["low", "high"]].tolist() == pytest.approx([low, high])


def test_frontier_averages_per_variant_rates_rather_than_pooling_runs():
    # Variant 0: one success in one run; variant 1: three failures. Mean of rates 0.5, pooled 0.25.
    variants = _runs({"a": [True, False, False, False]}, variant_id=[0, 1, 1, 1])
    result = jagged_frontier(_runs({"a": [True, True]}), variants, n_resamples=50)
    row = result.per_instance.iloc[0]
    assert row["perturbed_rate"] == 0.5
    assert row["variants"] == 2
    assert math.isnan(row["low"])  # several runs per variant: no binomial count for Newcombe


def test_frontier_drops_infrastructure_errors_instead_of_counting_failures():
    clean = jagged_frontier(_runs({"a": [True, False]}), _runs({"a": [True, True, False]}), n_resamples=50)
    noisy = jagged_frontier(
        _runs({"a": [True, None, False]}), _runs({"a": [True, np.nan, True, False]}), n_resamples=50
    )
    assert noisy.degradation == clean.degradation
    assert (noisy.infra_excluded_runs, clean.infra_excluded_runs) == (2, 0)


def test_frontier_min_runs_applies_to_the_statistics_and_reports_exclusions():
    baseline = _runs({"a": [True] * 6, "b": [False] * 2, "c": [True] * 6})
    variants = _runs({"a": [False] * 6, "b": [True] * 6, "d": [True] * 6})
    result = jagged_frontier(baseline, variants, min_runs=5, n_resamples=50)
    assert result.per_instance["instance"].tolist() == ["a"]
    assert result.degradation == 1.0
    assert set(result.excluded) == {"b", "c", "d"}
    assert "2 valid baseline runs" in result.excluded["b"]
    assert "0 variants" in result.excluded["c"]


def test_frontier_identical_instances_give_zero_width_and_two_levels_widen():
    outcomes = {f"i{k}": [True, True, False, False] for k in range(6)}
    variants = {f"i{k}": [True, False, False, False] for k in range(6)}
    one = jagged_frontier(_runs(outcomes), _runs(variants), n_resamples=400, seed=2)
    two = jagged_frontier(_runs(outcomes), _runs(variants), n_resamples=400, seed=2, levels=2)
    assert one.degradation == two.degradation == 0.25
    assert one.low == one.high == 0.25
    assert two.low < 0.25 < two.high


def test_frontier_resamples_repositories_when_given_clusters():
    baseline = _runs({"a": [True] * 4, "b": [True] * 4, "c": [False] * 4})
    variants = _runs({"a": [False] * 4, "b": [False] * 4, "c": [False] * 4})
    # a and b share a repository, so they are drawn together: estimates are 0, 1 or 2/3 only.
    result = jagged_frontier(baseline, variants, cluster_of={"a": "r1", "b": "r1", "c": "r2"}, n_resamples=400)
    assert result.per_instance["cluster"].tolist() == ["r1", "r1", "r2"]
    assert result.degradation == pytest.approx(2 / 3)
    assert (result.low, result.high) == (0.0, 1.0)
    with pytest.raises(ValueError, match="no cluster"):
        jagged_frontier(baseline, variants, cluster_of={"a": "r1"}, n_resamples=10)


def test_frontier_is_deterministic_and_validates_settings():
    baseline = _runs({f"i{k}": [k % 2 == 0, True, False] for k in range(8)})
    variants = _runs({f"i{k}": [False, k % 3 == 0, True] for k in range(8)})
    first = jagged_frontier(baseline, variants, n_resamples=300, seed=5)
    again = jagged_frontier(baseline, variants, n_resamples=300, seed=5)
    assert (first.low, first.high, first.p_value) == (again.low, again.high, again.p_value)
    with pytest.raises(ValueError, match="levels"):
        jagged_frontier(baseline, variants, levels=3)
    with pytest.raises(ValueError, match="boolean"):
        jagged_frontier(baseline.assign(resolved=2), variants)
    with pytest.raises(ValueError, match="both arms"):
        jagged_frontier(baseline, variants.assign(instance_id="other"), n_resamples=10)


def _simulated_arms(seed: int, n_instances: int = 40, runs: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Instances with a 0.1 drop in resolve probability; each variant has its own difficulty."""
    rng = np.random.default_rng(seed)
    base_p = rng.uniform(0.3, 0.9, n_instances)
    variant_p = np.clip(base_p[:, None] - 0.1 + rng.normal(0, 0.05, (n_instances, runs)), 0, 1)
    ids = np.repeat([f"i{k}" for k in range(n_instances)], runs)
    baseline = pd.DataFrame(
        {"instance_id": ids, "resolved": rng.random((n_instances, runs)).ravel() < np.repeat(base_p, runs)}
    )
    variants = pd.DataFrame({"instance_id": ids, "resolved": (rng.random((n_instances, runs)) < variant_p).ravel()})
    return baseline, variants


def test_frontier_interval_covers_the_true_degradation():
    # True degradation 0.1 (the clipping at 0 and 1 is never reached with these ranges). Over 80
    # simulated studies a 95% interval should cover about 76; accept 68 or more (sd of the count 1.9).
    covered = 0
    for seed in range(80):
        result = jagged_frontier(*_simulated_arms(seed), n_resamples=500, seed=seed)
        covered += result.low <= 0.1 <= result.high
    assert covered >= 68
