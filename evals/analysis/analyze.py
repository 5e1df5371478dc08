"""`analyze`: trajectories in, tidy CSVs plus a markdown/HTML report out. The CLI command calls this.

Outputs in `out`: steps.csv (one row per action), transitions.csv, delta_p.csv (only with two or more
conditions), drift.csv, report.md, report.html and the plots (*.png). Everything is a function of the inputs,
`seed` and `n_boot`, so a rerun writes identical files; unreadable trajectories are listed, not fatal.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from repoanchor.evals.analysis.drift import drift_table, roles_from_metadata
from repoanchor.evals.analysis.report import write_report
from repoanchor.evals.analysis.steps_frame import load_steps
from repoanchor.evals.analysis.transitions import PHASES, all_deltas, transition_table

# Enough digits for any CI, few enough that CSVs stay readable and diffs between runs stay meaningful.
FLOAT_FORMAT = "%.10g"
PATH_SEPARATOR = ";"


def _csv(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    return path


def _role_mapping(roles: Mapping[str, Any] | list | None) -> dict[str, str] | None:
    """Accept {path: role}, a variant's metadata (with `path_resolution_map`) or that list itself."""
    if roles is None:
        return None
    if isinstance(roles, Mapping) and "path_resolution_map" not in roles:
        return {str(path): str(role) for path, role in roles.items()}
    return roles_from_metadata(roles)


def analyze(
    paths: list[Path],
    out: Path,
    *,
    conditions: dict | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    roles: Mapping[str, Any] | list | None = None,
    phases: tuple[str, ...] = PHASES,
    header: str | None = None,
    extra_tables: list | None = None,
    delta_pairs: list[tuple[str, str]] | None = None,
    figures: list[tuple[str, str, bytes]] | None = None,
    label: str | None = None,
    methods=None,
) -> dict:
    """Analyse the trajectories under `paths` into `out`; returns a summary (counts, errors, files written).

    `conditions` maps files or folders to condition names (default: each file's parent folder name).
    `roles` gives decoy/proxy paths ({path: role} or variant metadata); without it visits are NA.
    `phases` are the phases kept for transitions; add "other" to keep those steps in the sequence.
    `extra_tables` ((title, frame) or (title, frame, note), e.g. resolve rates) lead the report's tables, and
    `figures` ((file name, caption, png)) its plots.
    `delta_pairs` limits Δp to those (a, b) condition pairs (default: every pair).
    `label` (e.g. the oracle's) is stamped on every figure and heads the methods; `methods` (`methods.Methods`)
    explains `extra_tables`.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frame = load_steps(list(paths), conditions)
    steps, runs = frame.steps, frame.runs
    transitions = transition_table(steps, phases=phases, seed=seed, n_boot=n_boot)
    deltas = all_deltas(steps, delta_pairs, phases=phases, seed=seed, n_boot=n_boot)
    drift = drift_table(steps, runs, _role_mapping(roles), phases=phases)
    written = {
        "steps.csv": _csv(
            steps.assign(
                files_read=steps["files_read"].map(PATH_SEPARATOR.join),
                files_edited=steps["files_edited"].map(PATH_SEPARATOR.join),
            ),
            out / "steps.csv",
        ),
        "transitions.csv": _csv(transitions, out / "transitions.csv"),
        "drift.csv": _csv(drift, out / "drift.csv"),
    }
    if steps["condition"].nunique() >= 2:
        written["delta_p.csv"] = _csv(deltas, out / "delta_p.csv")
    errors = [str(error) for error in frame.errors]
    written.update(
        write_report(
            out,
            transitions,
            deltas,
            drift,
            errors=errors,
            header=header,
            extra_tables=extra_tables or [],
            extra_figures=figures or [],
            label=label,
            methods=methods,
            bootstrap=(phases, n_boot, seed),
        )
    )
    return {
        "runs": len(runs),
        "steps": len(steps),
        "conditions": sorted(runs["condition"].unique()),
        "runs_per_condition": runs.groupby("condition").size().sort_index().to_dict(),
        "errors": errors,
        "superseded_attempts": len(frame.superseded),
        "files": {name: str(path) for name, path in sorted(written.items())},
        "seed": seed,
        "n_boot": n_boot,
    }
