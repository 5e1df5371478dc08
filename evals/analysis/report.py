"""Markdown and a self-contained HTML page from the analysis tables, with PNG plots.

Plots are drawn on `matplotlib.figure.Figure` objects with the Agg canvas directly (no pyplot, so no global
state and no display backend), and PNGs are saved without the "Software" metadata entry, so the same tables
give byte-identical files. The HTML embeds every PNG as a base64 data URI and links to nothing outside itself.
No timestamps are written; a caller that wants one passes it as `header`.
"""

from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from repoanchor.evals.analysis.transitions import PHASES

DPI = 100
FOREST_COLUMNS = ("comparison", "estimate", "low", "high")


def _png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _matrix(table: pd.DataFrame, column: str, phases: tuple[str, ...]) -> np.ndarray:
    grid = table.pivot(index="from", columns="to", values=column).reindex(index=phases, columns=phases)
    return grid.to_numpy(dtype=float)


def heatmap_png(table: pd.DataFrame, title: str, *, value: str = "p", phases: tuple[str, ...] = PHASES) -> bytes:
    """A phase × phase heatmap of `value` (p or delta) with its CI in each cell; Δp uses a diverging scale."""
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
        strong = not np.isnan(cell) and abs(cell) / limit > 0.6  # white text stays readable on dark cells
        axes.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if strong else "black")
    axes.set_xticks(range(len(phases)), phases)
    axes.set_yticks(range(len(phases)), phases)
    axes.set_xlabel("to")
    axes.set_ylabel("from")
    axes.set_title(title, fontsize=9)
    figure.colorbar(image, ax=axes, fraction=0.046)
    figure.tight_layout()
    return _png(figure)


def effort_png(drift: pd.DataFrame) -> bytes:
    """Steps per run by condition: a box plot with every run as a point (fixed jitter, so it is reproducible)."""
    conditions = sorted(drift["condition"].unique())
    figure = Figure(figsize=(max(4.0, 1.8 * len(conditions)), 3.6))
    axes = figure.add_subplot()
    groups = [drift.loc[drift["condition"] == c, "steps"].to_numpy(dtype=float) for c in conditions]
    axes.boxplot(groups, tick_labels=conditions, showfliers=False)
    jitter = np.random.default_rng(0)
    for position, group in enumerate(groups, start=1):
        axes.plot(position + jitter.uniform(-0.12, 0.12, len(group)), group, "o", alpha=0.6, markersize=4)
    axes.set_ylabel("steps per run")
    axes.set_title("Effort: steps per run", fontsize=9)
    axes.tick_params(axis="x", labelsize=8)
    figure.tight_layout()
    return _png(figure)


def forest_png(
    forest: pd.DataFrame,
    *,
    title: str = "Paired comparisons",
    xlabel: str = "difference in resolve rate (95% CI)",
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
    axes.set_xlim(-1.05, 1.05)
    axes.set_title(title, fontsize=9)
    figure.tight_layout()
    return _png(figure)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "condition"


def _cell(value) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ""
    return f"{value:.3f}" if isinstance(value, float) else str(value)


NO_ROWS = "No rows: the runs given hold no units for this table."


def _markdown_or_none(frame: pd.DataFrame) -> str:
    return markdown_table(frame) if len(frame) else f"_{NO_ROWS}_"


def markdown_table(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


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
) -> dict[str, Path]:
    """Write the PNGs, `report.md` (linking them) and `report.html` (embedding them) into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, str, bytes]] = list(extra_figures)  # (file name, caption, png)
    for condition in sorted(transitions["condition"].unique()):
        rows = transitions[transitions["condition"] == condition]
        figures.append((f"transitions_{_slug(condition)}.png", f"p(a→b): {condition}", heatmap_png(rows, condition)))
    for (a, b), rows in delta_p.groupby(["condition_a", "condition_b"], sort=True):
        caption = f"Δp = p({b}) − p({a}) ({rows['pairing'].iloc[0]})"
        figures.append((f"delta_{_slug(a)}_vs_{_slug(b)}.png", caption, heatmap_png(rows, caption, value="delta")))
    if len(drift):  # nothing was readable: the page still lists the unreadable files
        figures.append(("effort.png", "Steps per run by condition", effort_png(drift)))
    for name, _, png in figures:
        (out / name).write_bytes(png)
    tables = [*extra_tables, ("Transition probabilities", transitions), ("Drift by condition", drift_summary(drift))]
    if len(delta_p):
        tables.insert(len(extra_tables) + 1, ("Δp between conditions", delta_p))
    lead = [header] if header else []
    write_page(out, title, lead, [f"unreadable: {error}" for error in errors], figures, tables)
    return {"report.md": out / "report.md", "report.html": out / "report.html", **{n: out / n for n, _, _ in figures}}


def write_page(
    out: Path,
    title: str,
    lead: list[str],
    problems: list[str],
    figures: list[tuple[str, str, bytes]],
    tables: list[tuple],
    stem: str = "report",
) -> None:
    """`<stem>.md` (linking the PNGs already written in `out`) and a self-contained `<stem>.html`.

    `figures` are (file name, caption, png); `tables` are (name, frame) or (name, frame, note), the note
    printed under the table (which estimator it uses, what it counts)."""
    tables = [(*entry, "") if len(entry) == 2 else entry for entry in tables]
    md = [f"# {title}", *lead, *(["## Problems", "\n".join(f"- {p}" for p in problems)] if problems else [])]
    md += [f"## {caption}\n\n![{caption}]({name})" for name, caption, _ in figures]
    md += [f"## {name}\n\n{_markdown_or_none(frame)}" + (f"\n\n{note}" if note else "") for name, frame, note in tables]
    (out / f"{stem}.md").write_text("\n\n".join(md) + "\n", encoding="utf-8")
    body = [f"<h1>{html.escape(title)}</h1>", *(f"<p>{html.escape(line)}</p>" for line in lead)]
    if problems:
        items = "".join(f"<li>{html.escape(str(problem))}</li>" for problem in problems)
        body.append(f"<h2>Problems</h2><ul>{items}</ul>")
    for _, caption, png in figures:
        data = base64.b64encode(png).decode("ascii")
        image = f'<img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
        body.append(f"<h2>{html.escape(caption)}</h2>{image}")
    for name, frame, note in tables:
        table = (
            frame.to_html(index=False, na_rep="", float_format="{:.3f}".format) if len(frame) else f"<p>{NO_ROWS}</p>"
        )
        body.append(f"<h2>{html.escape(name)}</h2>{table}" + (f"<p><i>{html.escape(note)}</i></p>" if note else ""))
    style = "body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:collapse;font-size:80%}"
    style += "td,th{border:1px solid #ccc;padding:2px 6px}"
    page = f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
    page += f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    (out / f"{stem}.html").write_text(page, encoding="utf-8")
