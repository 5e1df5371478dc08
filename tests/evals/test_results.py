"""`repoanchor results` on graded matrices with known true effects, written as the pipeline writes them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from repoanchor.evals.analysis.outcomes import paired_comparison
from repoanchor.evals.analysis.results.tables import extend_table
from repoanchor.evals.analysis.results.units import load_units
from repoanchor.evals.analysis.results.write import write_results
from repoanchor.evals.cli.main import app
from tests.support.synthetic_matrix import CONDITIONS, Effects, matrix_config, write_matrix, write_suite

SOURCES = [f"o__p-{i}" for i in range(30)]
PERTURB, ANCHOR, HINTS = -0.2, 0.1, 0.0
INFRA_SOURCE = "o__p-0"
OUTCOME_SEED = 2


def source_of(unit) -> str:
    return unit.instance_id.split("__perturb")[0].split("__spt")[0]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """30 sources, original + 2 perturbed variants each, 3 conditions, 2 repeats; two units infra errors.

    One fixed draw (seed OUTCOME_SEED): with 7 intervals at 95% about 70% of draws cover every effect, so
    the draw is one of those; that intervals cover at their nominal rate is the coverage test's claim."""
    root = tmp_path_factory.mktemp("synthetic")
    suites = [write_suite(root / "suites", "original", SOURCES), write_suite(root / "suites", "perturb", SOURCES, 2)]
    effects = Effects(SOURCES, seed=1, perturb=PERTURB, anchor=ANCHOR, hints=HINTS)
    rng = np.random.default_rng(OUTCOME_SEED)

    def outcome(unit):
        if (
            source_of(unit) == INFRA_SOURCE
            and unit.suite == "perturb"
            and unit.condition == "plain"
            and unit.repeat == 1
        ):
            return None
        return bool(rng.random() < effects.p(source_of(unit), unit.suite, unit.condition))

    config = matrix_config(root, suites, repeats=2)
    write_matrix(config, outcome, cost=lambda unit: 2.0 if unit.condition == "anchor" else 1.0)
    summary = write_results([root / "matrix"], root / "out")
    return root, summary


def table(root, name: str) -> pd.DataFrame:
    return pd.read_csv(root / "out" / f"{name}.csv")


def test_the_tables_recover_the_known_effects_within_their_intervals(synthetic):
    root, summary = synthetic
    assert summary["problems"] == []
    perturb = table(root, "perturb")
    assert len(perturb) == 3  # one row per condition
    assert (perturb["instances"] == 30).all()
    assert (perturb["estimator"] == "clustered").all()
    assert ((perturb["low"] <= PERTURB) & (PERTURB <= perturb["high"])).all(), perturb
    assert (perturb["drop"] > 0).all()
    anchor = table(root, "conditions_anchor")
    assert list(anchor["suite_kind"]) == ["original", "perturb"]
    assert ((anchor["low"] <= ANCHOR) & (ANCHOR <= anchor["high"])).all(), anchor
    hints = table(root, "conditions_hints")
    assert ((hints["low"] <= HINTS) & (HINTS <= hints["high"])).all(), hints
    assert (anchor["p_holm"] >= anchor["p_midp"]).all()


def test_repeats_and_variants_are_averaged_per_source_instance(synthetic):
    root, _ = synthetic
    plain = table(root, "perturb").set_index("condition").loc["plain"]
    units = table(root, "units")
    graded = units[units["graded"] & (units["condition"] == "plain")]
    # 30 pairs, not 30 × 2 repeats × 2 variants: the runs are counted, the pairs are instances.
    assert plain["instances"] == 30
    per_source = graded.groupby(["source_instance", "suite_kind"])["resolved"].mean().unstack()
    expected = (per_source["perturb"] - per_source["original"]).mean()
    assert plain["paired_difference"] == pytest.approx(expected)


def test_every_unit_is_counted_and_rates_are_given_both_ways(synthetic):
    root, summary = synthetic
    outcomes = table(root, "outcomes").set_index(["suite", "condition"])
    cell = outcomes.loc[("perturb", "plain")]
    assert cell["units"] == 120
    assert cell["graded"] == 118
    assert cell["infra"] == 2
    assert cell["infra_kinds"] == "rate_limit: 2"
    assert cell["rate"] == pytest.approx(cell["resolved"] / 118)
    assert cell["rate_infra_unresolved"] == pytest.approx(cell["resolved"] / 120)
    assert summary["units"] == 540
    assert summary["graded"] == 538


def test_drift_and_files_read_come_from_each_units_own_trajectory_and_role_map(synthetic):
    root, _ = synthetic
    drift = table(root, "drift").set_index(["suite_kind", "condition"])
    # The synthetic agent reads pkg/a.py on originals; the decoy, a.py and b.py on perturbed tasks.
    assert drift.loc[("original", "plain"), "mean_files_read"] == 1
    assert drift.loc[("perturb", "plain"), "mean_files_read"] == 3
    assert drift.loc[("perturb", "plain"), "mean_decoy_visits"] == 1
    assert drift.loc[("original", "plain"), "mean_decoy_visits"] == 0
    assert drift.loc[("perturb", "plain"), "explore_steps_before_first_edit"] == 4  # ls + three reads
    assert drift.loc[("perturb", "plain"), "resolved_reading_at_most_1"] == 0
    perturb = table(root, "perturb").set_index("condition")
    assert perturb.loc["plain", "files_ratio"] == 3


def test_effort_and_cost_matched_columns(synthetic):
    root, _ = synthetic
    anchor = table(root, "conditions_anchor").set_index("suite_kind")
    assert anchor.loc["original", "cost_first"] == 1
    assert anchor.loc["original", "cost_second"] == 2
    # At the common cost of 1 USD no anchor run (2 USD each) counts: the difference is minus plain's rate.
    assert anchor.loc["original", "matched_cost"] == 1
    assert anchor.loc["original", "difference_at_matched_cost"] == pytest.approx(-anchor.loc["original", "rate_first"])
    assert anchor.loc["original", "budget"] == "separate"
    effort = table(root, "effort")
    cost = effort[(effort["measure"] == "cost") & (effort["second"] == "anchor") & (effort["runs"] == "all")]
    assert (cost["difference"] == 1).all()
    assert (cost["ratio"] == 2).all()


def test_the_report_pages_carry_every_table_and_plot(synthetic):
    root, summary = synthetic
    page = (root / "out" / "results.md").read_text()
    titles = ["Perturb: original vs perturbed", "Extend: original vs Extend", "plain vs anchor", "no hints vs hints"]
    for title in [*titles, "Jagged Frontier degradation", "Effort deltas", "Exploration drift"]:
        assert title in page
    assert "percentile bootstrap over instances" in page  # the estimator is written under its table
    html = (root / "out" / "results.html").read_text()
    assert html.count("data:image/png;base64,") == 2
    assert "http" not in html.split("<body>")[1]
    assert {"frontier_forest.png", "comparisons_forest.png", "frontier_instances.csv"} <= set(summary["files"])


def synthetic_frame(seed: int, n: int = 30) -> pd.DataFrame:
    """The unit frame of one replication (no files): 2 repeats, 2 variants per source."""
    sources = [f"s{i}" for i in range(n)]
    effects, rng = Effects(sources, seed, perturb=PERTURB, anchor=ANCHOR, hints=HINTS), np.random.default_rng(seed + 1)
    rows = []
    for repeat in (1, 2):
        for source in sources:
            for kind, tasks in (("original", [source]), ("perturb", [f"{source}__perturb-{v}" for v in (0, 1)])):
                for _task in tasks:
                    for condition in CONDITIONS:
                        name = condition["name"]
                        resolved = bool(rng.random() < effects.p(source, kind, name))
                        labels = {"source_instance": source, "suite_kind": kind, "condition": name, "repeat": repeat}
                        rows.append({**labels, "model": "m", "scaffold": "x", "graded": True, "resolved": resolved})
    return pd.DataFrame(rows)


def test_interval_coverage_over_seeded_replications_is_near_nominal():
    """200 replications × 3 effects: the 95% intervals cover the true effects about 95% of the time
    (measured over these seeds: 0.963 overall; 0.96 perturb, 0.95 anchor, 0.98 hints; the band is ±3 points)."""
    specs = [
        ("suite_kind", "original", "perturb", {"condition": "plain"}, PERTURB),
        ("condition", "plain", "anchor", {"suite_kind": "original"}, ANCHOR),
        ("condition", "plain", "plain+hints", {"suite_kind": "original"}, HINTS),
    ]
    covered = []
    for seed in range(200):
        frame = synthetic_frame(seed)
        for factor, first, second, within, truth in specs:
            row = paired_comparison(frame, factor, first, second, within)
            covered.append(row["low"] <= truth <= row["high"])
    assert 0.92 <= np.mean(covered) <= 0.98, np.mean(covered)


@pytest.fixture(scope="module")
def frontier(tmp_path_factory):
    """The Jagged Frontier worked figure: 20 baseline runs and 20 variants × 1 run, every one resolved."""
    root = tmp_path_factory.mktemp("frontier")
    sources = ["o__p-0", "o__p-1"]
    original = write_suite(root / "suites", "original", sources)
    spt = write_suite(root / "suites", "spt", sources, variants=20)
    plain = [{"name": "plain"}]
    baseline = matrix_config(root, [original], repeats=20, conditions=plain, name="baseline")
    variants = matrix_config(root, [spt], repeats=1, conditions=plain, name="variants")
    for config in (baseline, variants):
        write_matrix(config, outcome=lambda unit: True, cost=lambda unit: 0.1)
    return root, write_results([root / "baseline", root / "variants"], root / "out")


def test_the_jagged_frontier_worked_figure(frontier):
    root, _ = frontier
    summary = table(root, "frontier").iloc[0]
    assert summary["suite"] == "spt"
    assert summary["instances"] == 2
    assert summary["baseline_runs"] == 40
    assert summary["variants"] == 40
    assert summary["degradation"] == 0
    assert summary["instance_intervals_excluding_zero"] == 0
    instances = table(root, "frontier_instances")
    assert instances["half_width"].round(3).tolist() == [0.161, 0.161]  # ±16.1 points
    assert instances["low"].round(3).tolist() == [-0.161, -0.161]


def test_results_cli_reads_matrix_folders_and_names_what_is_missing(frontier, tmp_path):
    root, _ = frontier
    result = CliRunner().invoke(
        app, ["results", str(root / "baseline"), str(root / "variants"), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["units"] == 80
    assert (tmp_path / "results.html").is_file()
    (tmp_path / "empty").mkdir()
    missing = CliRunner().invoke(app, ["results", str(tmp_path / "empty"), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 2
    assert "matrix.json" in missing.output


def test_a_done_unit_without_a_grade_is_counted_not_scored(frontier, tmp_path):
    root, _ = frontier
    ungraded = next((root / "variants" / "units").iterdir()) / "grade.json"
    saved = ungraded.read_text()
    ungraded.unlink()
    try:
        units = load_units([root / "variants"]).units
    finally:
        ungraded.write_text(saved)
    assert int((~units["graded"]).sum()) == 1
    assert units["resolved"].isna().sum() == 1


FAMILY_EFFECTS = {"proxy_chain": -0.3, "runtime_target": -0.1}


@pytest.fixture(scope="module")
def extend_units(tmp_path_factory):
    """40 sources on the original suite and two Extend families with known mean effects, 2 repeats, plain.

    One fixed draw, as `synthetic` is (seed 4's missed proxy_chain's effect by 2.5 points; coverage at the
    nominal rate is the coverage test's claim, for the estimator these rows share)."""
    root = tmp_path_factory.mktemp("extend")
    sources = [f"o__p-{i}" for i in range(40)]
    suites = [
        write_suite(root / "suites", "original", sources),
        write_suite(root / "suites", "extend", sources, families=tuple(FAMILY_EFFECTS)),
    ]
    effects = Effects(sources, seed=3, perturb=0.0)
    rng = np.random.default_rng(5)

    def outcome(unit):
        family = unit.instance_id.split("__extend-")[1] if "__extend-" in unit.instance_id else None
        rate = effects.p(unit.instance_id.split("__extend-")[0], "original", "plain")
        return bool(rng.random() < rate + FAMILY_EFFECTS.get(family, 0.0))

    config = matrix_config(root, suites, repeats=2, conditions=[{"name": "plain"}])
    write_matrix(config, outcome, cost=lambda unit: 1.0)
    return load_units([root / "matrix"]).units


def test_the_extend_table_pairs_each_family_on_its_sources_and_averages_the_families(extend_units):
    extend = extend_table(extend_units).set_index("family")
    assert list(extend.index) == ["proxy_chain", "runtime_target", "average"]
    for family, effect in FAMILY_EFFECTS.items():
        row = extend.loc[family]
        assert row["pairs"] == 40  # source instances, not 80 runs
        assert row["low"] <= effect <= row["high"], row
        assert row["extend_low"] <= row["extend_rate"] <= row["extend_high"]
        assert row["difference"] == pytest.approx(row["extend_rate"] - row["original_rate"])  # same 40, 2 runs each
    average = extend.loc["average"]
    assert average["difference"] == pytest.approx(extend.loc[list(FAMILY_EFFECTS), "difference"].mean())
    assert average["low"] <= np.mean(list(FAMILY_EFFECTS.values())) <= average["high"]
    assert average["low"] < average["difference"] < average["high"]
    assert pd.isna(average["p_holm"])
    assert extend.loc["proxy_chain", "p_holm"] >= extend.loc["proxy_chain", "p_midp"]


def test_a_task_id_that_is_no_file_name_still_finds_its_role_map(tmp_path):
    """Ground truth is filed under the task id made safe (`o:p#1` -> `o_p_1.json`), as the builders and the
    grader name it; the role map (decoy visits) is read from there, not looked up under the raw id."""
    suites = [write_suite(tmp_path / "suites", "perturb", ["o:p#1"])]
    assert (suites[0] / "ground_truth" / "o_p_1__perturb-0.json").is_file()
    config = matrix_config(tmp_path, suites, repeats=1, conditions=[{"name": "plain"}])
    write_matrix(config, lambda unit: True, cost=lambda unit: 1.0)
    units = load_units([tmp_path / "matrix"]).units
    assert len(units) == 1
    assert units.loc[0, "decoy_visits"] == 1  # the synthetic run reads pkg/decoy.py; NA if no role map was found
