"""`repoanchor results`: graded run matrices in, the papers' tables out (markdown, HTML, CSV, PNG).

Everything is a function of the files the matrices, their grades and their suites hold (and fixed seeds),
so a rerun writes identical files. Nothing is graded here: a finished unit without grade.json is counted
as "not graded yet" in the first table, and `repoanchor grade` grades it.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pandas as pd

from repoanchor.evals.analysis.analyze import FLOAT_FORMAT
from repoanchor.evals.analysis.methods import MARK, Methods, general_lines
from repoanchor.evals.analysis.outcomes import N_RESAMPLES, SEED
from repoanchor.evals.analysis.page import write_page
from repoanchor.evals.analysis.report import FOREST_COLUMNS, forest_png
from repoanchor.evals.analysis.results.effort import drift_table, effort_table
from repoanchor.evals.analysis.results.estimators import results_methods
from repoanchor.evals.analysis.results.frontier import NOTE as FRONTIER_NOTE
from repoanchor.evals.analysis.results.frontier import forest_rows, frontier_tables
from repoanchor.evals.analysis.results.tables import (
    ESTIMATORS,
    condition_table,
    extend_table,
    outcome_counts,
    perturb_table,
)  # fmt: skip
from repoanchor.evals.analysis.results.units import load_config, load_units
from repoanchor.evals.runs.run_one import TRUSTED_POLICIES

ORACLE_LABEL = "MODEL: ORACLE POLICY (scripted; applies the ground-truth patch; not a language model)."

COUNTS_NOTE = (
    "rate: resolved / graded (infrastructure errors and crashes excluded); rate_infra_unresolved: resolved / "
    "(graded + infra), infra counted as unresolved. Wilson 95% intervals. Units not graded yet are counted, "
    "never scored."
)
PERTURB_NOTE = (
    "drop = original − perturbed rate (points of resolve rate); relative_drop = drop / original rate; "
    "paired_difference (perturbed − original) with its 95% interval. " + ESTIMATORS + " Holm across the table."
)
CONDITION_NOTE = (
    "difference = second − first. " + ESTIMATORS + " Holm across the table. cost_*: mean USD per run; "
    "budget: how the anchor condition's stages shared the limits (shared = within the plain condition's); "
    "difference_at_matched_cost: a run counts as resolved only at cost ≤ matched_cost, the smaller of the "
    "two conditions' largest run costs (NA when a run has no recorded cost)."
)
EFFORT_NOTE = "Mean per-instance difference (second − first); percentile bootstrap over instances (10,000, seed 0)."
DRIFT_NOTE = (
    "explore_steps_before_first_edit: exploration steps before the first edit, over runs that edit; files "
    "read: distinct paths read; decoy/proxy visits: steps touching the task's own decoys/proxies (NA: no role map)."
)
EXTEND_NOTE = (
    "original_rate: the family's source instances on the original suite; extend_low/high: Wilson 95%. "
    f"difference (extend − original): {ESTIMATORS} Average: families weigh equally; its interval resamples source "
    f"instances ({N_RESAMPLES:,}, seed {SEED}), an instance in several families moving them together."
)


def _csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")


def results_tables(units: pd.DataFrame) -> dict[str, tuple[str, pd.DataFrame, str]]:
    """file stem -> (title, table, note), in report order."""
    frontier, per_instance = frontier_tables(units)
    return {
        "outcomes": ("Units, resolve rates and infrastructure errors", outcome_counts(units), COUNTS_NOTE),
        "perturb": ("Perturb: original vs perturbed", perturb_table(units), PERTURB_NOTE),
        "extend": ("Extend: original vs Extend per family", extend_table(units), EXTEND_NOTE),
        "conditions_anchor": ("Conditions: plain vs anchor", condition_table(units, "anchor"), CONDITION_NOTE),
        "conditions_hints": ("Conditions: no hints vs hints", condition_table(units, "hints"), CONDITION_NOTE),
        "frontier": ("Jagged Frontier degradation", frontier, FRONTIER_NOTE),
        "frontier_instances": ("Jagged Frontier per instance", per_instance, FRONTIER_NOTE),
        "effort": ("Effort deltas", effort_table(units), EFFORT_NOTE),
        "drift": ("Exploration drift", drift_table(units), DRIFT_NOTE),
    }


def _figures(tables: dict, label: str | None) -> list[tuple[str, str, bytes]]:
    figures = []
    frontier = forest_rows(tables["frontier"][1])
    if len(frontier):
        xlabel = "degradation: baseline − variant rate (95% CI)"
        png = forest_png(frontier, title="Jagged Frontier degradation (forest plot)", xlabel=xlabel, note=label)
        caption = "Jagged Frontier degradation per model, scaffold, dataset and condition: mean over instances "
        caption += "with its bootstrap interval (the Jagged Frontier table's rows); right of 0: worse on variants."
        figures.append(("frontier_forest.png", caption, png))
    estimates = (
        ("perturb", "paired_difference"),
        ("conditions_anchor", "difference"),
        ("conditions_hints", "difference"),
    )
    compared = [
        table.assign(comparison=table.apply(_label, axis=1), estimate=table[column])[list(FOREST_COLUMNS)]
        for name, column in estimates
        if len(table := tables[name][1])
    ]
    if compared:
        png = forest_png(pd.concat(compared), title="Paired differences in resolve rate", note=label)
        caption = "Paired differences in resolve rate (the Perturb and Conditions tables' rows) with their 95% "
        caption += f"intervals; an interval off the dashed 0 line is marked {MARK} in its table."
        figures.append(("comparisons_forest.png", caption, png))
    return figures


def _label(row: pd.Series) -> str:
    if "first" in row:
        return f"{row['model']} / {row['scaffold']} / {row['suite_kind']}: {row['second']} − {row['first']}"
    return f"{row['model']} / {row['scaffold']} / {row['condition']}: {row['suite']} − original"


class Results(NamedTuple):
    units: pd.DataFrame
    tables: dict[str, tuple[str, pd.DataFrame, str]]
    figures: list[tuple[str, str, bytes]]
    problems: list[str]
    matrices: int
    label: str | None = None

    def methods(self) -> Methods:
        """The methods header's entries: general lines, then each table's estimator."""
        return Methods(general_lines(self.label), {}).merged(results_methods(self.tables))

    def shown(self) -> list[tuple[str, pd.DataFrame, str]]:
        """The tables a page prints (the per-instance frontier rows go to CSV only: one per instance)."""
        return [entry for stem, entry in self.tables.items() if stem != "frontier_instances"]

    def counts_line(self) -> str:
        units = self.units
        return (
            f"{len(units)} units from {self.matrices} matrix(es): {int(units['graded'].sum())} graded, "
            f"{int(units['status'].isin(('infra_error', 'crashed')).sum())} infrastructure errors or crashes, "
            f"{int(((units['status'] == 'done') & ~units['graded']).sum())} not graded yet, "
            f"{int((units['status'] == 'pending').sum())} pending."
        )


def policy_label(paths: list[Path]) -> str | None:
    """The oracle label when a matrix's model is a scripted policy (`TRUSTED_POLICIES`), naming it if the
    matrices mix it with language models; None for language models only."""
    models = {(model.name, model.model) for path in paths for model in load_config(path).models}
    scripted = sorted(name for name, model in models if model in TRUSTED_POLICIES)
    if not scripted or len(scripted) == len(models):
        return ORACLE_LABEL if scripted else None
    return f"{ORACLE_LABEL[:-1]}: model(s) {', '.join(scripted)}; the others are language models."


def compute_results(paths: list[Path], label: str | None = None) -> Results:
    """Every table and plot of the matrices under `paths` (YAML files or `out` folders); `label` (default: the
    oracle's when a matrix's model is the oracle) is stamped on every figure and heads the methods."""
    label = label or policy_label(list(paths))
    loaded = load_units(list(paths))
    tables = results_tables(loaded.units)
    return Results(loaded.units, tables, _figures(tables, label), loaded.problems, len(paths), label)


def save_results(results: Results, out: Path, *, header: str | None = None, title: str = "RepoAnchor results") -> dict:
    """Write the CSV tables, the PNGs and results.md/results.html into `out`; returns a summary."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _csv(results.units, out / "units.csv")
    for stem, (_, frame, _) in results.tables.items():
        _csv(frame, out / f"{stem}.csv")
    for name, _, png in results.figures:
        (out / name).write_bytes(png)
    lead = [*([header] if header else []), results.counts_line()]
    write_page(
        out, title, lead, results.problems, results.figures, results.shown(), stem="results", methods=results.methods()
    )
    files = ["results.md", "results.html", "units.csv", *(f"{stem}.csv" for stem in results.tables)]
    return {
        "units": len(results.units),
        "graded": int(results.units["graded"].sum()),
        "problems": results.problems,
        "files": sorted([*files, *(figure[0] for figure in results.figures)]),
        "tables": {stem: len(frame) for stem, (_, frame, _) in results.tables.items()},
    }


def write_results(paths: list[Path], out: Path, **options) -> dict:
    """`compute_results` then `save_results`: what `repoanchor results` does."""
    return save_results(compute_results(paths), out, **options)
