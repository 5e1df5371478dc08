"""Markdown and a self-contained HTML page from the analysis tables, with PNG plots.

Plots are drawn on `matplotlib.figure.Figure` objects with the Agg canvas directly (no pyplot, so no global
state and no display backend), and PNGs are saved without the "Software" metadata entry, so the same tables
give byte-identical files. The HTML embeds every PNG as a base64 data URI and links to nothing outside itself.
No timestamps are written; a caller that wants one passes it as `header`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from repoanchor.evals.analysis.figure_png import png_bytes
from repoanchor.evals.analysis.methods import MARK, Methods, general_lines, transition_methods
from repoanchor.evals.analysis.page import write_page
from repoanchor.evals.analysis.transitions import PHASES

FOREST_COLUMNS = ("comparison", "estimate", "low", "high")


def _matrix(table: pd.DataFrame, column: str, phases: tuple[str, ...]) -> np.ndarray:
    grid = table.pivot(index="from", columns="to", values=column).reindex(index=phases, columns=phases)
    return grid.to_numpy(dtype=float)


def heatmap_png(
    table: pd.DataFrame, title: str, *, value: str = "p", phases: tuple[str, ...] = PHASES, note: str | None = None
) -> bytes:
    """A phase × phase heatmap of `value` (p or delta) with its CI in each cell; Δp uses a diverging scale and
    marks with `MARK` the cells whose interval excludes 0."""
    values, low, high = (_matrix(table, column, phases) for column in (value, "low", "high"))
    figure = Figure(figsize=(1.6 * len(phases) + 1.6, 1.4 * len(phases) + 0.8))
    axes = figure.add_subplot()
    diverging = value != "p"
    limit = max(np.nanmax(np.abs(values), initial=0.0), 0.05) if diverging else 1.0
    image = axes.imshow(values, cmap="RdBu_r" if diverging else "Blues", vmin=-limit if diverging else 0, vmax=limit)
    for (i, j), cell in np.ndenumerate(values):
        text = "n/a" if np.isnan(cell) else f"{cell:+.2f}" if diverging else f"{cell:.2f}"
        if not np.isnan(low[i, j]):
            text += f"\n[{low[i, j]:.2f}, {high[i, j]:.2f}]"
            text += MARK if diverging and (low[i, j] > 0 or high[i, j] < 0) else ""
        strong = not np.isnan(cell) and abs(cell) / limit > 0.6  # white text stays readable on dark cells
        axes.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if strong else "black")
    axes.set_xticks(range(len(phases)), phases)
    axes.set_yticks(range(len(phases)), phases)
    axes.set_xlabel("to (next step's phase)")
    axes.set_ylabel("from (step's phase)")
    axes.set_title(title, fontsize=9)
    bar = figure.colorbar(image, ax=axes, fraction=0.046)
    bar.set_label(f"Δp (95% CI; {MARK}: excludes 0)" if diverging else "p(from → to) (95% CI)")
    figure.tight_layout()
    return png_bytes(figure, note)


def effort_png(drift: pd.DataFrame, note: str | None = None) -> bytes:
    """Steps per run by condition: a box plot with every run as a point (fixed jitter, so it is reproducible)."""
    conditions = sorted(drift["condition"].unique())
    # Horizontal boxes: condition labels (suite/scaffold/model/condition) are long and must not overlap.
    label_inches = 0.075 * max((len(c) for c in conditions), default=10)
    figure = Figure(figsize=(label_inches + 4.0, 0.45 * len(conditions) + 1.4))
    axes = figure.add_subplot()
    groups = [drift.loc[drift["condition"] == c, "steps"].to_numpy(dtype=float) for c in conditions]
    rows = np.arange(len(conditions), 0, -1)  # first condition on top, as in the tables
    axes.boxplot(groups, positions=rows, tick_labels=conditions, showfliers=False, orientation="horizontal")
    jitter = np.random.default_rng(0)
    for row, group in zip(rows, groups, strict=True):
        axes.plot(group, row + jitter.uniform(-0.12, 0.12, len(group)), "o", alpha=0.6, markersize=4)
    axes.set_xlabel("steps per run")
    axes.set_ylabel("condition")
    axes.set_title("Effort: steps per run", fontsize=9)
    axes.tick_params(axis="y", labelsize=8)
    figure.tight_layout()
    return png_bytes(figure, note)


def forest_png(
    forest: pd.DataFrame,
    *,
    title: str = "Paired comparisons",
    xlabel: str = "difference in resolve rate (95% CI)",
    note: str | None = None,
) -> bytes:
    """Rows (comparison, estimate, low, high) as points with CI whiskers, first row on top."""
    # Wide enough for the labels: a comparison names its factor and what it holds fixed.
    label_inches = 0.075 * max((len(str(c)) for c in forest["comparison"]), default=10)
    figure = Figure(figsize=(label_inches + 4.0, 0.45 * len(forest) + 1.2))
    axes = figure.add_subplot()
    rows = np.arange(len(forest))[::-1]
    estimate = forest["estimate"].to_numpy(dtype=float)
    # A percentile interval need not contain the mean; matplotlib refuses negative whiskers, so clip at 0.
    errors = np.clip(
        [estimate - forest["low"].to_numpy(dtype=float), forest["high"].to_numpy(dtype=float) - estimate], 0, None
    )
    axes.errorbar(estimate, rows, xerr=errors, fmt="o", capsize=3)
    axes.set_ylim(-0.7, len(forest) - 0.3)
    axes.axvline(0, color="grey", linewidth=0.8, linestyle="--")
    axes.set_yticks(rows, forest["comparison"].astype(str))
    axes.set_xlabel(xlabel)
    axes.set_ylabel("comparison")
    axes.set_xlim(-1.05, 1.05)
    axes.set_title(title, fontsize=9)
    figure.tight_layout()
    return png_bytes(figure, note)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "condition"


def drift_summary(drift: pd.DataFrame) -> pd.DataFrame:
    """Per condition: runs, median steps, median steps before first edit, mean explore→explore, visits."""
    grouped = drift.groupby("condition", sort=True)
    summary = pd.DataFrame(
        {
            "runs": grouped.size(),
            "median_steps": grouped["steps"].median().astype(float),
            "median_steps_before_first_edit": grouped["steps_before_first_edit"].median().astype(float),
            "mean_explore_explore_rate": grouped["explore_explore_rate"].mean().astype(float),
            "median_distinct_files_read": grouped["distinct_files_read"].median().astype(float),
        }
    )
    for column in [c for c in drift.columns if c.endswith("_visits")]:
        summary[column] = grouped[column].sum(min_count=1)  # stays NA when no role mapping was given
    return summary.reset_index()


def _trajectory_figures(transitions, delta_p, drift, note: str | None) -> list[tuple[str, str, bytes]]:
    figures = []  # (file name, caption, png)
    for condition in sorted(transitions["condition"].unique()):
        rows = transitions[transitions["condition"] == condition]
        runs = int(rows["runs"].iloc[0])
        caption = f"Transition probabilities p(from → to) between step phases over the {runs} run(s) of {condition}."
        png = heatmap_png(rows, f"p(a→b): {condition}", note=note)
        figures.append((f"transitions_{_slug(condition)}.png", caption, png))
    for (a, b), rows in delta_p.groupby(["condition_a", "condition_b"], sort=True):
        pairing, instances = rows["pairing"].iloc[0], int(rows["instances"].iloc[0])
        title = f"Δp = p({b}) − p({a})"
        caption = f"{title}, {pairing} over {instances} instance(s); {MARK}: the interval excludes 0."
        png = heatmap_png(rows, f"{title} ({pairing})", value="delta", note=note)
        figures.append((f"delta_{_slug(a)}_vs_{_slug(b)}.png", caption, png))
    if len(drift):  # nothing was readable: the page still lists the unreadable files
        caption = "Steps per run by condition: box (quartiles, median) and every run as a point."
        figures.append(("effort.png", caption, effort_png(drift, note=note)))
    return figures


def write_report(
    out: Path,
    transitions: pd.DataFrame,
    delta_p: pd.DataFrame,
    drift: pd.DataFrame,
    *,
    errors: list[str] = (),
    title: str = "RepoAnchor analysis",
    header: str | None = None,
    extra_tables: list[tuple] = (),
    extra_figures: list[tuple[str, str, bytes]] = (),
    label: str | None = None,
    methods: Methods | None = None,
    bootstrap: tuple[tuple[str, ...], int, int] = (PHASES, 1000, 0),
) -> dict[str, Path]:
    """Write the PNGs, `report.md` (linking them) and `report.html` (embedding them) into `out`.

    `label` is stamped on every figure made here and heads the methods (the oracle's, for an oracle run);
    `methods` explains `extra_tables`; `bootstrap` is the (phases, n_boot, seed) the trajectory tables used."""
    out.mkdir(parents=True, exist_ok=True)
    figures = [*extra_figures, *_trajectory_figures(transitions, delta_p, drift, label)]
    for name, _, png in figures:
        (out / name).write_bytes(png)
    tables = [*extra_tables, ("Transition probabilities", transitions), ("Drift by condition", drift_summary(drift))]
    if len(delta_p):
        tables.insert(len(extra_tables) + 1, ("Δp between conditions", delta_p))
    explained = Methods(general_lines(label), {}).merged(methods or Methods([], {}))
    explained = explained.merged(transition_methods(*bootstrap, delta_p))
    lead = [header] if header else []
    problems = [f"unreadable: {error}" for error in errors]
    write_page(out, title, lead, problems, figures, tables, methods=explained)
    return {"report.md": out / "report.md", "report.html": out / "report.html", **{n: out / n for n, _, _ in figures}}
