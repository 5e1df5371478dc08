"""The methods header of a report: what each table's estimator is, built from the objects that computed it.

A `Methods` is general lines (level, label, marker) plus one (table title, estimator) per table printed; the
page writer checks that every table it prints has an entry, so a table cannot appear unexplained. The
transition tables' entries come from `transition_methods`, built from the same phases, seed and replicate
count that `analyze` passed to the bootstrap; the results tables' from `results.estimators`.
"""

from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np
import pandas as pd

MARK = "*"
MARK_COLUMN = "ci_excludes_0"
MARK_NOTE = f"{MARK} in {MARK_COLUMN} (and in a Δp heatmap cell): the 95% interval of the difference excludes 0."
# Columns holding a difference whose interval (low, high) can exclude 0; a rate's interval always excludes 0.
DIFFERENCE_COLUMNS = ("paired_difference", "difference", "degradation", "delta")


class Methods(NamedTuple):
    lines: list[str]
    tables: dict[str, str]  # table title -> estimator

    def merged(self, other: Methods) -> Methods:
        return Methods([*self.lines, *(line for line in other.lines if line not in self.lines)],
                       {**self.tables, **other.tables})  # fmt: skip


def general_lines(label: str | None, level: float = 0.95) -> list[str]:
    lines = [f"Intervals are {level:.0%} two-sided unless a table says otherwise. {MARK_NOTE}"]
    return [f"Policy: {label}", *lines] if label else lines


def mark_excluding_zero(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with `MARK_COLUMN` after `high`: MARK where a difference's interval excludes 0, else ""."""
    if not len(frame) or not {"low", "high"} <= set(frame) or not set(DIFFERENCE_COLUMNS) & set(frame):
        return frame
    low, high = (pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float) for c in ("low", "high"))
    with np.errstate(invalid="ignore"):
        marks = np.where((low > 0) | (high < 0), MARK, "")
    marked = frame.copy()
    marked.insert(list(frame.columns).index("high") + 1, MARK_COLUMN, marks)
    return marked


def transition_methods(steps_phases: tuple[str, ...], n_boot: int, seed: int, delta: pd.DataFrame) -> Methods:
    """The trajectory tables' estimators, from the arguments `analyze` gave the bootstrap."""
    resampled = f"percentile bootstrap, {n_boot:,} replicates, seed {seed}"
    transitions = (
        f"p(a→b) = count(a→b) / n, pooled over the runs of a condition (a group: suite/scaffold/model/condition "
        f"for matrix units, the condition part the matrix's own name); phases {', '.join(steps_phases)} (other steps "
        f"dropped). n: transitions out of a; count: a→b transitions; runs: trajectories; units: matrix units "
        f"(an anchored unit's two stages are one unit). Interval: {resampled} over units."
    )
    pairings = sorted(set(delta["pairing"])) if len(delta) else []
    how = {"paired": "paired rows resample shared instances (all their units) for both sides",
           "unpaired": "unpaired rows resample each condition's units independently"}  # fmt: skip
    delta_text = f"Δp = p_b − p_a per transition; {resampled}: " + "; ".join(how[p] for p in pairings) + "."
    drift = "Per condition: run counts, medians of steps and of steps before the first edit, mean explore→explore "
    drift += "rate, median distinct files read, summed decoy/proxy visits (NA: no role map). Descriptive, no interval."
    tables = {"Transition probabilities": transitions, "Drift by condition": drift}
    if pairings:
        tables["Δp between conditions"] = delta_text
    return Methods([], tables)


def missing(methods: Methods, titles: list[str]) -> list[str]:
    return [title for title in titles if title not in methods.tables]


def methods_markdown(methods: Methods, titles: list[str]) -> str:
    items = [*(f"- {line}" for line in methods.lines), *(f"- **{t}**: {methods.tables[t]}" for t in titles)]
    return "## Methods\n\n" + "\n".join(items)


def methods_html(methods: Methods, titles: list[str]) -> str:
    items = [f"<li>{html.escape(line)}</li>" for line in methods.lines]
    items += [
        f'<li data-table="{html.escape(t)}"><b>{html.escape(t)}</b>: {html.escape(methods.tables[t])}</li>'
        for t in titles
    ]
    return f'<section id="methods"><h2>Methods</h2><ul>{"".join(items)}</ul></section>'
