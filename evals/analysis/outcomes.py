"""Resolve rates and paired comparisons over graded runs: pure pandas over the grade records.

Rates get Wilson intervals. A comparison pairs runs that share the source instance, scaffold, model and
repeat and differ in one factor (suite: original vs perturbed; condition: plain vs anchor ...): the
difference gets Newcombe's paired interval (method 10) and McNemar's mid-p, and the p-values of all
comparisons in a report are Holm-adjusted. Ungraded units (infrastructure errors, crashes) are left out
and counted, never scored as failures.
"""

from __future__ import annotations

import pandas as pd

from repoanchor.evals.analysis.stats import holm, mcnemar_midp, newcombe_paired_interval, paired_counts, wilson_interval

KEYS = ["source_instance", "scaffold", "model", "repeat"]


def grades_frame(grades: list[dict], sources: dict[str, str]) -> pd.DataFrame:
    """One row per graded unit; `sources` maps task id -> source instance (the pairing key)."""
    frame = pd.DataFrame(grades)
    if frame.empty:
        return frame
    frame["source_instance"] = frame["instance_id"].map(lambda task: sources.get(task, task))
    return frame


def resolve_rates(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    graded = frame[frame["graded"]]
    rows = []
    for key, group in graded.groupby(by, sort=True):
        resolved, n = int(group["resolved"].sum()), len(group)
        low, high = wilson_interval(resolved, n)
        rows.append(
            {
                **dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                "resolved": resolved,
                "n": n,
                "rate": resolved / n,
                "low": low,
                "high": high,
            }
        )
    ungraded = frame[~frame["graded"]].groupby(by).size().rename("ungraded")
    table = pd.DataFrame(rows)
    return table.merge(ungraded.reset_index(), on=by, how="left").fillna({"ungraded": 0}) if rows else table


def paired_comparison(frame: pd.DataFrame, factor: str, first: str, second: str, within: dict) -> dict | None:
    """`second` minus `first` on `factor`, among rows matching `within`, paired on KEYS."""
    graded = frame[frame["graded"]]
    for column, value in within.items():
        graded = graded[graded[column] == value]
    a = graded[graded[factor] == first].set_index(KEYS)["resolved"]
    b = graded[graded[factor] == second].set_index(KEYS)["resolved"]
    shared = a.index.intersection(b.index)
    if len(shared) == 0:
        return None
    x, y = a.loc[shared].astype(bool).tolist(), b.loc[shared].astype(bool).tolist()
    # Newcombe's difference is p(first argument) - p(second): pass the later condition first.
    both, only_second, only_first, neither = paired_counts(y, x)
    difference, low, high = newcombe_paired_interval(both, only_second, only_first, neither)
    label = ", ".join(f"{k}={v}" for k, v in within.items())
    return {
        "comparison": f"{factor}: {second} − {first}" + (f" ({label})" if label else ""),
        "pairs": len(shared),
        "rate_first": sum(x) / len(x),
        "rate_second": sum(y) / len(y),
        "estimate": difference,
        "low": low,
        "high": high,
        "discordant": f"{only_first}/{only_second}",
        "p_midp": mcnemar_midp(only_first, only_second),
    }


def comparisons(frame: pd.DataFrame, specs: list[tuple[str, str, str, dict]]) -> pd.DataFrame:
    rows = [row for spec in specs if (row := paired_comparison(frame, *spec)) is not None]
    table = pd.DataFrame(rows)
    if not table.empty:
        table["p_holm"] = holm(table["p_midp"].tolist())
    return table
