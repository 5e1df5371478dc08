"""Effort deltas and exploration drift per condition, from the unit frame (`units.load_units`).

Effort: steps, cost, input/output tokens and cost per step, compared for the same pairs the outcome tables
compare (original vs each perturbed suite; plain vs anchor; no hints vs hints), over all finished runs and
over resolved runs only; each difference is the mean per-instance difference with a bootstrap over
instances (`outcomes.clustered_difference`). Drift: RepoMirage's measures per condition — exploration
steps before the first edit, files read, the share of resolved runs that read 1 and at most 3 files, and
visits to each task's own decoys and proxies (NA where a task has no role map).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repoanchor.evals.analysis.outcomes import clustered_difference, matched_means
from repoanchor.evals.analysis.results.tables import MODEL_KEY, PERTURBED_KINDS, condition_pairs

MEASURES = ("steps", "cost", "input_tokens", "output_tokens", "cost_per_step")


def _finished(units: pd.DataFrame) -> pd.DataFrame:
    done = units[units["status"] == "done"].copy()
    for column in MEASURES[:-1]:
        done[column] = pd.to_numeric(done[column], errors="coerce").astype(float)
    steps = done["steps"].where(done["steps"] > 0)
    done["cost_per_step"] = done["cost"] / steps
    return done


def comparison_specs(units: pd.DataFrame) -> list[tuple[str, str, str, dict]]:
    """(factor, first, second, within) for every comparison the outcome tables make."""
    specs = []
    for (model, scaffold), _ in units.groupby(MODEL_KEY, sort=True):
        base = {"model": model, "scaffold": scaffold}
        for condition in sorted(units["condition"].unique()):
            specs += [("suite_kind", "original", kind, {**base, "condition": condition}) for kind in PERTURBED_KINDS]
        for factor in ("anchor", "hints"):
            for first, second in condition_pairs(units, factor):
                for kind in sorted(units["suite_kind"].unique()):
                    specs.append(("condition", first, second, {**base, "suite_kind": kind}))
    return specs


def effort_table(units: pd.DataFrame) -> pd.DataFrame:
    done = _finished(units)
    rows = []
    for runs, frame in (("all", done), ("resolved", done[done["resolved"].fillna(False).astype(bool)])):
        for factor, first, second, within in comparison_specs(units):
            for measure in MEASURES:
                shared, x, y, runs_a, runs_b = matched_means(frame, factor, first, second, within, measure)
                if len(shared) == 0:
                    continue
                difference = clustered_difference(x, y)
                rows.append(
                    {
                        **within,
                        "first": first,
                        "second": second,
                        "runs": runs,
                        "measure": measure,
                        "instances": len(shared),
                        "mean_first": float(x.mean()),
                        "mean_second": float(y.mean()),
                        "difference": difference["estimate"],
                        "low": difference["low"],
                        "high": difference["high"],
                        "ratio": float(y.mean() / x.mean()) if x.mean() else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def drift_table(units: pd.DataFrame) -> pd.DataFrame:
    """Per suite × model × scaffold × condition: RepoMirage's drift measures (see the module docstring)."""
    done = _finished(units)
    rows = []
    for key, group in done.groupby(["suite_kind", *MODEL_KEY, "condition"], sort=True):
        resolved = group[group["resolved"].fillna(False).astype(bool)]
        files = resolved["files_read"].dropna()
        before = group["explore_before_first_edit"].dropna()
        rows.append(
            {
                **dict(zip(["suite_kind", *MODEL_KEY, "condition"], key, strict=True)),
                "runs": len(group),
                "runs_with_trajectory": int(group["files_read"].notna().sum()),
                "explore_steps_before_first_edit": float(before.mean()) if len(before) else np.nan,
                "runs_never_editing": int(group["files_read"].notna().sum() - len(before)),
                "mean_files_read": float(group["files_read"].dropna().mean())
                if group["files_read"].notna().any()
                else np.nan,
                "resolved_runs": len(resolved),
                "resolved_reading_at_most_1": float((files <= 1).mean()) if len(files) else np.nan,
                "resolved_reading_at_most_3": float((files <= 3).mean()) if len(files) else np.nan,
                "mean_decoy_visits": _mean_or_na(group["decoy_visits"]),
                "mean_proxy_visits": _mean_or_na(group["proxy_visits"]),
            }
        )
    return pd.DataFrame(rows)


def _mean_or_na(column: pd.Series) -> float:
    known = column.dropna()
    return float(known.astype(float).mean()) if len(known) else np.nan
