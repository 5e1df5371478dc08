"""The outcome tables of a graded matrix: Perturb, Extend, conditions, counts. Pure functions of the unit frame.

Units are `units.load_units` rows. Rates count graded units (infra excluded) and, beside them, graded
units plus infrastructure errors and crashes (infra counted as unresolved). Differences pair on the source
instance (`outcomes.CLUSTER`): repeats and variants are averaged per instance, never counted as pairs.
Each table is returned with a note that names its estimator; p-values are Holm-adjusted within a table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repoanchor.evals.analysis.outcomes import BINARY, CLUSTERED, N_RESAMPLES, SEED, matched_means, paired_comparison
from repoanchor.evals.analysis.stats import holm, wilson_interval
from repoanchor.evals.analysis.stats_bootstrap import percentile_interval

MODEL_KEY = ["model", "scaffold"]
PERTURBED_KINDS = ("perturb", "spt")
INFRA = ("infra_error", "crashed")
ESTIMATORS = f"Paired on the source instance. One run per instance and side: {BINARY}. Otherwise: {CLUSTERED}."


def _groups(frame: pd.DataFrame, by: list[str]):
    for key, group in frame.groupby(by, sort=True, dropna=False):
        yield dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)), group


def counts(group: pd.DataFrame) -> dict:
    """Resolved over graded (infra excluded) and over graded + infra (infra counted as unresolved)."""
    graded = group[group["graded"]]
    infra = int(group["status"].isin(INFRA).sum())
    resolved, n = int(graded["resolved"].sum()), len(graded)
    row = {"resolved": resolved, "graded": n, "infra": infra}
    for suffix, total in (("", n), ("_infra_unresolved", n + infra)):
        low, high = wilson_interval(resolved, total) if total else (np.nan, np.nan)
        row |= {f"rate{suffix}": resolved / total if total else np.nan, f"low{suffix}": low, f"high{suffix}": high}
    return row


def outcome_counts(units: pd.DataFrame) -> pd.DataFrame:
    """Per suite × model × scaffold × condition: every unit accounted for, and the rate both ways."""
    rows = []
    for key, group in _groups(units, ["suite", *MODEL_KEY, "condition"]):
        status = group["status"]
        kinds = group.loc[status == "infra_error", "infra_error"].fillna("unknown").value_counts().sort_index()
        rows.append(
            {
                **key,
                "units": len(group),
                **counts(group),
                "crashed": int((status == "crashed").sum()),
                "not_graded_yet": int(((status == "done") & ~group["graded"]).sum()),
                "pending": int((status == "pending").sum()),
                "infra_kinds": ", ".join(f"{kind}: {count}" for kind, count in kinds.items()),
            }
        )
    return pd.DataFrame(rows)


def _with_holm(table: pd.DataFrame) -> pd.DataFrame:
    """Holm over the rows that have a p (an average row has none)."""
    if len(table):
        tested = table["p_midp"].notna() if "p_midp" in table else pd.Series(False, index=table.index)
        table["p_holm"] = np.nan
        table.loc[tested, "p_holm"] = holm(table.loc[tested, "p_midp"].tolist())
    return table


def _mean(series: pd.Series) -> float:
    values = series.dropna().astype(float)
    return float(values.mean()) if len(values) else np.nan


def perturb_table(units: pd.DataFrame) -> pd.DataFrame:
    """RepoMirage Table 1's shape per model × scaffold × condition: original vs perturbed resolve rate,
    the absolute and relative drop with the paired interval of the difference, and files read on each."""
    rows = []
    for key, group in _groups(units, [*MODEL_KEY, "condition"]):
        original = group[group["suite_kind"] == "original"]
        for kind in PERTURBED_KINDS:
            perturbed = group[group["suite_kind"] == kind]
            compared = paired_comparison(group, "suite_kind", "original", kind, {})
            if original.empty or perturbed.empty or compared is None:
                continue
            before, after = counts(original), counts(perturbed)
            files_before, files_after = _mean(original["files_read"]), _mean(perturbed["files_read"])
            rows.append(
                {
                    **key,
                    "suite": kind,
                    "instances": compared["pairs"],
                    "original_rate": before["rate"],
                    "perturbed_rate": after["rate"],
                    "drop": before["rate"] - after["rate"],
                    "relative_drop": (before["rate"] - after["rate"]) / before["rate"] if before["rate"] else np.nan,
                    "paired_difference": compared["estimate"],
                    "low": compared["low"],
                    "high": compared["high"],
                    "p_midp": compared["p_midp"],
                    "original_files_read": files_before,
                    "perturbed_files_read": files_after,
                    "files_ratio": files_after / files_before if files_before else np.nan,
                    "original_rate_infra_unresolved": before["rate_infra_unresolved"],
                    "perturbed_rate_infra_unresolved": after["rate_infra_unresolved"],
                    "estimator": "binary" if compared["estimator"] == BINARY else "clustered",
                }
            )
    return _with_holm(pd.DataFrame(rows))


def extend_table(units: pd.DataFrame) -> pd.DataFrame:
    """Per family: the original resolve rate of its source instances vs the Extend pass rate (Wilson intervals),
    and their difference paired on the source instance; then the average over families (each family weighs the
    same, as RepoMirage averages), its difference's interval a bootstrap over source instances."""
    rows = []
    extend = units[units["suite_kind"] == "extend"]
    for key, group in _groups(extend, [*MODEL_KEY, "condition"]):
        cells, paired = [], []
        for family, tasks in group.groupby("family", sort=True):
            sources = set(tasks["source_instance"])
            original = units[
                (units["suite_kind"] == "original")
                & units["source_instance"].isin(sources)
                & (units["model"] == key["model"]) & (units["scaffold"] == key["scaffold"])
                & (units["condition"] == key["condition"])
            ]  # fmt: skip
            both = pd.concat([original, tasks])
            compared = paired_comparison(both, "suite_kind", "original", "extend", {})
            cells.append(
                {**key, "family": family, "sources": len(sources), **_pair(counts(original), counts(tasks), compared)}
            )
            paired.append(matched_means(both[both["graded"]], "suite_kind", "original", "extend", {}, "resolved"))
        rows += cells
        if cells:
            pooled = {c: _mean(pd.Series([cell[c] for cell in cells])) for c in ("original_rate", "extend_rate")}
            rows.append(
                {**key, "family": "average", "sources": group["source_instance"].nunique(), **pooled,
                 **pooled_difference(paired)}
            )  # fmt: skip
    return _with_holm(pd.DataFrame(rows))


def _pair(original: dict, extend: dict, compared: dict | None) -> dict:
    return {
        "original_rate": original["rate"],
        "original_graded": original["graded"],
        "extend_rate": extend["rate"],
        "extend_low": extend["low"],
        "extend_high": extend["high"],
        "extend_graded": extend["graded"],
        "extend_rate_infra_unresolved": extend["rate_infra_unresolved"],
        "infra": original["infra"] + extend["infra"],
        "pairs": compared["pairs"] if compared else 0,
        "difference": compared["estimate"] if compared else np.nan,
        "low": compared["low"] if compared else np.nan,
        "high": compared["high"] if compared else np.nan,
        "p_midp": compared["p_midp"] if compared else np.nan,
        "estimator": ("binary" if compared["estimator"] == BINARY else "clustered") if compared else "",
    }


def pooled_difference(families: list[tuple]) -> dict:
    """The average over families of each family's mean per-instance difference (extend − original), with a
    percentile bootstrap that resamples source instances, so an instance in several families moves them all.

    `families` are `outcomes.matched_means` results (instances, original means, extend means, ...)."""
    per_family = [(pd.Index(shared).get_level_values(0), y - x) for shared, x, y, *_ in families if len(shared)]
    if not per_family:
        return {"difference": np.nan, "low": np.nan, "high": np.nan}
    instances = sorted(set().union(*(set(sources) for sources, _ in per_family)))
    position = {name: i for i, name in enumerate(instances)}
    rng = np.random.default_rng(SEED)
    weights = rng.multinomial(len(instances), np.full(len(instances), 1 / len(instances)), size=N_RESAMPLES)
    estimate, replicates = 0.0, np.zeros(N_RESAMPLES)
    for sources, differences in per_family:
        columns = weights[:, [position[name] for name in sources]].astype(float)
        totals = columns.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):  # a draw that misses the family: no value for it
            replicates += np.where(totals > 0, columns @ differences / np.where(totals > 0, totals, 1), np.nan)
        estimate += float(differences.mean())
    low, high = percentile_interval(replicates / len(per_family), 0.95)
    return {"difference": estimate / len(per_family), "low": low, "high": high}


def condition_pairs(units: pd.DataFrame, factor: str) -> list[tuple[str, str]]:
    """(first, second) condition names differing in `factor` alone: plain→anchor, or no hints→hints."""
    described = units.drop_duplicates("condition").set_index("condition")[["anchor", "hints"]]
    pairs = []
    for first, a in described.iterrows():
        for second, b in described.iterrows():
            if factor == "anchor" and not a["anchor"] and b["anchor"] and a["hints"] == b["hints"]:
                pairs.append((first, second))
            if factor == "hints" and a["anchor"] == b["anchor"] and a["hints"] == "none" and b["hints"] != "none":
                pairs.append((first, second))
    return sorted(pairs)


def condition_table(units: pd.DataFrame, factor: str) -> pd.DataFrame:
    """Per suite × model × scaffold and condition pair: the paired difference (second − first), its interval
    and p (Holm across the table), each side's mean cost, and the difference at a matched cost."""
    rows = []
    for first, second in condition_pairs(units, factor):
        for key, group in _groups(units, ["suite_kind", *MODEL_KEY]):
            compared = paired_comparison(group, "condition", first, second, {})
            if compared is None:
                continue
            sides = [group[group["condition"] == name] for name in (first, second)]
            rows.append(
                {
                    **key,
                    "first": first,
                    "second": second,
                    **{k: compared[k] for k in ("pairs", "runs_first", "runs_second", "rate_first", "rate_second")},
                    "difference": compared["estimate"],
                    "low": compared["low"],
                    "high": compared["high"],
                    "p_midp": compared["p_midp"],
                    "cost_first": _mean(sides[0]["cost"]),
                    "cost_second": _mean(sides[1]["cost"]),
                    "budget": ",".join(sorted((set(sides[0]["budget"]) | set(sides[1]["budget"])) - {"plain"}))
                    or "plain",
                    **_cost_matched(group, first, second),
                    "estimator": "binary" if compared["estimator"] == BINARY else "clustered",
                }
            )
    return _with_holm(pd.DataFrame(rows))


def _cost_matched(group: pd.DataFrame, first: str, second: str) -> dict:
    """The difference when a run counts as resolved only within a cost both conditions reached: the smaller
    of the two sides' largest run costs (resolve rate at a common per-run budget). NA without costs."""
    sides = group[group["condition"].isin((first, second)) & group["graded"]]
    if sides["cost"].isna().any() or sides.empty:
        return {"matched_cost": np.nan, "difference_at_matched_cost": np.nan}
    cap = float(min(sides[sides["condition"] == name]["cost"].max() for name in (first, second)))
    within = group["resolved"].fillna(False).astype(bool) & (group["cost"].astype(float) <= cap)
    capped = group.assign(resolved=within)  # only graded rows are compared; the others keep graded False
    compared = paired_comparison(capped, "condition", first, second, {})
    return {"matched_cost": cap, "difference_at_matched_cost": compared["estimate"] if compared else np.nan}
