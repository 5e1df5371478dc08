"""A report page: `<stem>.md` linking the PNGs and a self-contained `<stem>.html` embedding them.

Order: title, lead lines, the methods header (one estimator per table printed: a table without one is an
error, not a silent gap), problems, figures, tables. Each figure is an HTML `<figure>` with the PNG's own
title as its heading and a `<figcaption>`; tables whose differences' intervals exclude 0 get the marker
column (`methods.mark_excluding_zero`). No timestamps: a caller that wants one passes it in `lead`.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import numpy as np
import pandas as pd

from repoanchor.evals.analysis.figure_png import png_labels
from repoanchor.evals.analysis.methods import Methods, mark_excluding_zero, methods_html, methods_markdown, missing

NO_ROWS = "No rows: the runs given hold no units for this table."
STYLE = (
    "body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:collapse;font-size:80%}"
    "td,th{border:1px solid #ccc;padding:2px 6px}figure{margin:1em 0}figcaption{font-size:90%;color:#333}"
)


# Counts become floats when a row lacks them (NA, e.g. an average row); printed as counts, not as 2.000.
COUNT_NAME = re.compile(
    r"^(n|count|runs|units|pairs|instances|sources|infra|graded|resolved|crashed|pending|variants)$"
    r"|_(graded|runs|count|instances|intervals|visits|yet)$|^(runs|infra|baseline|excluded)_"
)


def counts_as_integers(frame: pd.DataFrame) -> pd.DataFrame:
    """Count columns held as floats shown as integers (NA stays empty); other columns untouched."""
    shown = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if COUNT_NAME.search(str(column)) and values.dtype.kind == "f" and (values.dropna() % 1 == 0).all():
            shown[column] = values.astype("Int64")
    return shown


def _cell(value) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ""
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def markdown_table(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def _markdown_or_none(frame: pd.DataFrame) -> str:
    return markdown_table(frame) if len(frame) else f"_{NO_ROWS}_"


def _html_table(frame: pd.DataFrame) -> str:
    if not len(frame):
        return f"<p>{NO_ROWS}</p>"
    return frame.astype(object).map(_cell).to_html(index=False)  # the markdown's cells: NA empty, floats .3f


def figure_title(caption: str, png: bytes) -> str:
    return png_labels(png).get("title") or caption


def _markdown(title, lead, methods_md, problems, figures, tables) -> str:
    md = [f"# {title}", *lead, *([methods_md] if methods_md else [])]
    md += ["## Problems", "\n".join(f"- {p}" for p in problems)] if problems else []
    md += [f"## {figure_title(caption, png)}\n\n![{caption}]({name})\n\n_{caption}_" for name, caption, png in figures]
    md += [f"## {name}\n\n{_markdown_or_none(frame)}" + (f"\n\n{note}" if note else "") for name, frame, note in tables]
    return "\n\n".join(md) + "\n"


def _html_body(title, lead, methods_block, problems, figures, tables) -> list[str]:
    body = [f"<h1>{html.escape(title)}</h1>", *(f"<p>{html.escape(line)}</p>" for line in lead)]
    body += [methods_block] if methods_block else []
    if problems:
        items = "".join(f"<li>{html.escape(str(problem))}</li>" for problem in problems)
        body.append(f"<h2>Problems</h2><ul>{items}</ul>")
    for _, caption, png in figures:
        data = base64.b64encode(png).decode("ascii")
        body.append(
            f"<figure><h2>{html.escape(figure_title(caption, png))}</h2>"
            f'<img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    for name, frame, note in tables:
        note_html = f"<p><i>{html.escape(note)}</i></p>" if note else ""
        body.append(f'<section class="table"><h2>{html.escape(name)}</h2>{_html_table(frame)}{note_html}</section>')
    return body


def write_page(
    out: Path,
    title: str,
    lead: list[str],
    problems: list[str],
    figures: list[tuple[str, str, bytes]],
    tables: list[tuple],
    stem: str = "report",
    methods: Methods | None = None,
) -> None:
    """`figures` are (file name, caption, png); `tables` are (name, frame) or (name, frame, note), the note
    printed under the table. With `methods`, every table printed must have an estimator entry there."""
    tables = [
        (entry[0], counts_as_integers(mark_excluding_zero(entry[1])), entry[2] if len(entry) > 2 else "")
        for entry in tables
    ]
    titles = [name for name, _, _ in tables]
    if methods is not None and (unexplained := missing(methods, titles)):
        raise ValueError(f"tables without a methods entry: {', '.join(unexplained)}")
    methods_md = methods_markdown(methods, titles) if methods else ""
    methods_block = methods_html(methods, titles) if methods else ""
    (out / f"{stem}.md").write_text(_markdown(title, lead, methods_md, problems, figures, tables), encoding="utf-8")
    body = _html_body(title, lead, methods_block, problems, figures, tables)
    page = f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
    page += f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    (out / f"{stem}.html").write_text(page, encoding="utf-8")
