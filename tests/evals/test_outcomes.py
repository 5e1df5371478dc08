"""Rates (infra counted beside them) and paired comparisons on the source instance, on hand-made units."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from repoanchor.evals.analysis.outcomes import paired_comparison
from repoanchor.evals.analysis.results.tables import counts
from repoanchor.evals.analysis.stats import holm, mcnemar_midp


def units(records: list[dict], sources: dict[str, str]) -> pd.DataFrame:
    """The unit frame's columns these estimators read; `sources` maps task id -> source instance."""
    frame = pd.DataFrame(records)
    frame["source_instance"] = frame["instance_id"].map(lambda task: sources.get(task, task))
    frame["status"] = frame["graded"].map({True: "done", False: "infra_error"})
    return frame


def grades(failures_when_perturbed_plain: int = 4) -> tuple[list[dict], dict]:
    records = []
    for i, (suite, condition) in itertools.product(
        range(6), itertools.product(["original", "perturb"], ["plain", "anchor"])
    ):
        resolved = not (suite == "perturb" and condition == "plain" and i < failures_when_perturbed_plain)
        records.append(
            {
                "unit_id": f"{i}-{suite}-{condition}",
                "suite": suite,
                "instance_id": f"{suite}-{i}",
                "graded": True,
                "resolved": resolved,
                "scaffold": "mini",
                "model": "m",
                "condition": condition,
                "repeat": 1,
            }
        )
    records.append(
        {
            "unit_id": "lost",
            "suite": "perturb",
            "instance_id": "perturb-9",
            "graded": False,
            "resolved": None,
            "scaffold": "mini",
            "model": "m",
            "condition": "plain",
            "repeat": 1,
        }
    )
    sources = {f"{suite}-{i}": f"instance-{i}" for suite in ("original", "perturb") for i in range(10)}
    return records, sources


def test_rates_leave_ungraded_units_out_and_count_them():
    frame = units(*grades())
    row = counts(frame[(frame["suite"] == "perturb") & (frame["condition"] == "plain")])
    assert (row["resolved"], row["graded"], row["infra"]) == (2, 6, 1)
    assert row["low"] < row["rate"] < row["high"]
    assert row["rate_infra_unresolved"] == pytest.approx(2 / 7)
    assert counts(frame[(frame["suite"] == "original") & (frame["condition"] == "plain")])["rate"] == 1.0


def test_paired_degradation_and_anchor_effect():
    frame = units(*grades())
    degradation = paired_comparison(frame, "suite", "original", "perturb", {"condition": "plain"})
    anchor = paired_comparison(frame, "condition", "plain", "anchor", {"suite": "perturb"})
    assert degradation["estimate"] == pytest.approx(-4 / 6)
    assert degradation["low"] < degradation["estimate"] < degradation["high"] < 0
    assert degradation["discordant"] == "4/0"
    assert degradation["p_midp"] == pytest.approx(mcnemar_midp(4, 0))
    assert anchor["estimate"] == pytest.approx(4 / 6)
    assert anchor["p_midp"] == pytest.approx(degradation["p_midp"])  # the same 4 discordant pairs, flipped
    assert holm([degradation["p_midp"], anchor["p_midp"]]) == pytest.approx([min(1.0, 2 * anchor["p_midp"])] * 2)


def test_no_shared_pairs_gives_no_row():
    records, sources = grades()
    frame = units(records, {})  # without sources, task ids differ across suites: nothing pairs
    assert paired_comparison(frame, "suite", "original", "perturb", {"condition": "plain"}) is None


def clustered_grades(n_instances: int = 12, repeats: int = 2, variants: int = 2) -> tuple[list[dict], dict]:
    """Original runs resolve; of each instance's perturbed runs (variants x repeats) a known share fails."""
    records, sources = [], {}
    for i in range(n_instances):
        for repeat in range(1, repeats + 1):
            records.append({"suite": "original", "instance_id": f"orig-{i}", "repeat": repeat, "resolved": True})
            sources[f"orig-{i}"] = f"instance-{i}"
            for v in range(variants):
                task = f"perturb-{i}-v{v}"
                sources[task] = f"instance-{i}"
                failed = (i % 3 == 0) or (i % 3 == 1 and v == 0)  # instance rates 0, 0.5, 1 on the perturbed side
                records.append({"suite": "perturb", "instance_id": task, "repeat": repeat, "resolved": not failed})
    common = {"graded": True, "scaffold": "mini", "model": "m", "condition": "plain"}
    return [{**common, **record, "unit_id": str(n)} for n, record in enumerate(records)], sources


def test_repeats_and_variants_pair_on_the_source_instance_not_on_each_run():
    row = paired_comparison(units(*clustered_grades()), "suite", "original", "perturb", {"condition": "plain"})
    assert row["pairs"] == 12  # instances, not the 48 perturbed runs
    assert (row["runs_first"], row["runs_second"]) == (24, 48)
    assert row["estimate"] == pytest.approx(-0.5)  # mean over instances of (0, 0.5, 1) - 1
    assert row["low"] < -0.5 < row["high"] < 0
    assert "bootstrap over instances" in row["estimator"]
    # Twice the instances, same per-instance effect: the interval narrows; more repeats of the same
    # instances do not (they are not new evidence about other instances).
    wider = paired_comparison(units(*clustered_grades(n_instances=24)), "suite", "original", "perturb", {})
    repeated = paired_comparison(units(*clustered_grades(repeats=6)), "suite", "original", "perturb", {})
    assert wider["high"] - wider["low"] < row["high"] - row["low"]
    assert repeated["high"] - repeated["low"] == pytest.approx(row["high"] - row["low"])
