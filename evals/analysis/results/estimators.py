"""Which estimator each results table used, read from the table itself and the constants that computed it.

Paired tables carry an `estimator` column (`binary` or `clustered`, per row): the methods header names only
the estimators that occur. Every entry is built from the same constants the computing functions use
(`outcomes.BINARY`, `outcomes.CLUSTERED`, the frontier's resamples and seed), so it cannot drift from them.
"""

from __future__ import annotations

import pandas as pd

from repoanchor.evals.analysis.methods import Methods
from repoanchor.evals.analysis.outcomes import BINARY, CLUSTERED, N_RESAMPLES, SEED
from repoanchor.evals.analysis.results import frontier

NAMES = {"binary": BINARY, "clustered": CLUSTERED}
PAIRING = "Differences pair runs on the source instance (with model and scaffold); repeats and variants are averaged."
WILSON = "Wilson score interval per rate (resolved / graded; infrastructure errors and crashes excluded)"


def paired_estimators(frame: pd.DataFrame) -> str:
    """The paired estimators the table's rows used, in a fixed order; 'none' for a table without rows."""
    used = [
        NAMES[name] for name in ("binary", "clustered") if "estimator" in frame and (frame["estimator"] == name).any()
    ]
    return "; ".join(used) if used else "no paired rows"


def _outcomes(frame: pd.DataFrame) -> str:
    return f"{WILSON}. units: units in the matrix cell; graded: units with a grade."


def _perturb(frame: pd.DataFrame) -> str:
    return f"paired_difference (perturbed − original): {paired_estimators(frame)}. Holm across the table (p_holm)."


def _conditions(frame: pd.DataFrame) -> str:
    text = f"difference (second − first): {paired_estimators(frame)}. Holm across the table (p_holm). "
    return text + "pairs: instances with both conditions; runs_first/runs_second: graded runs on each side."


def _extend(frame: pd.DataFrame) -> str:
    return (
        f"extend_low/high: {WILSON}. difference (extend − original): {paired_estimators(frame)}. Average row: "
        f"families weigh equally, percentile bootstrap over source instances ({N_RESAMPLES:,}, seed {SEED})."
    )


def _frontier(frame: pd.DataFrame) -> str:
    return (
        f"degradation (baseline − mean variant rate), mean over instances; percentile bootstrap over instances "
        f"({frontier.N_RESAMPLES:,}, seed {frontier.SEED}); sign-flip p. Per instance: Newcombe hybrid score "
        "interval for two independent proportions."
    )


def _effort(frame: pd.DataFrame) -> str:
    return (
        f"difference (second − first) of each measure: mean per-instance difference; percentile bootstrap over "
        f"instances ({N_RESAMPLES:,}, seed {SEED}); no p. runs: finished runs compared; instances: with both sides."
    )


def _drift(frame: pd.DataFrame) -> str:
    return "Descriptive per condition (means, shares; NA: no role map); no interval."


BY_STEM = {
    "outcomes": _outcomes,
    "perturb": _perturb,
    "extend": _extend,
    "conditions_anchor": _conditions,
    "conditions_hints": _conditions,
    "frontier": _frontier,
    "frontier_instances": _frontier,
    "effort": _effort,
    "drift": _drift,
}


def results_methods(tables: dict[str, tuple[str, pd.DataFrame, str]]) -> Methods:
    """One entry per table (title -> estimator), from `write.results_tables`' stems and frames."""
    return Methods([PAIRING], {title: BY_STEM[stem](frame) for stem, (title, frame, _) in tables.items()})
