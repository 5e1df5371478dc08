"""Per-run exploration-drift measures over the step table of `steps_frame.load_steps`.

- steps_before_first_edit: steps (of any phase) before the first edit-phase step; NA when the run never edits
  (censored, not "all of them").
- explore_explore_rate: #(explore→explore) / #(explore→·) over the phase sequence of `transitions.run_counts`
  (`other` dropped, as STEPS.md says); NA when no transition leaves explore.
- distinct_files_read: distinct paths in `files_read`.
- decoy_visits, proxy_visits, ...: steps whose files (read or edited) include a path the variant's metadata
  gives that role. Without a role mapping we cannot tell, so these are NA — never 0.
- steps, input/output tokens, cost: from the per-run table, NA when the scaffold did not record them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from repoanchor.evals.analysis.transitions import PHASES, run_counts

ROLES = ("decoy", "proxy")
# path_resolution_map entry kind → (field holding the path(s), role) pairs. A proxy chain lists every module
# ("a.py -> b.py -> leaf.py"); a wrapper is the public module forwarding to a hidden one, where the code now is.
KIND_ROLES = {
    "decoy": (("visible_path", "decoy"),),
    "import_proxy": (("chain", "proxy"),),
    "wrapper_module": (("visible_path", "wrapper"), ("runtime_path", "hidden")),
    "json_value": (("runtime_path", "resource"),),
}


def roles_from_metadata(metadata: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """{path: role} from a variant's metadata (or its `path_resolution_map` list); the first role seen wins."""
    entries = metadata.get("path_resolution_map", []) if isinstance(metadata, Mapping) else metadata
    roles: dict[str, str] = {}
    for entry in entries:
        for field, role in KIND_ROLES.get(entry.get("kind"), ()):
            for path in str(entry.get(field) or "").split(" -> "):
                if path.strip():
                    roles.setdefault(path.strip(), role)
    return roles


def _matches(path: str, listed: str) -> bool:
    """A touched path matches a listed (repository-relative) one exactly or as a path suffix."""
    return path == listed or path.endswith("/" + listed)


def touches(paths, listed: list[str]) -> bool:
    """Whether any of `paths` is one of the `listed` role paths."""
    return any(_matches(path, known) for path in paths for known in listed)


def role_visits(steps: pd.DataFrame, roles: Mapping[str, str], role: str) -> pd.Series:
    """Per run: the number of steps touching at least one path with `role`."""
    listed = [path for path, given in roles.items() if given == role]
    touched = steps["files_read"] + steps["files_edited"]
    return touched.map(lambda paths: touches(paths, listed)).groupby(steps["run"]).sum()


def drift_table(
    steps: pd.DataFrame,
    runs: pd.DataFrame,
    roles: Mapping[str, str] | None = None,
    *,
    role_names: tuple[str, ...] = ROLES,
    phases: tuple[str, ...] = PHASES,
) -> pd.DataFrame:
    """One row per run of `runs` with the measures of the module docstring."""
    table = runs[["run", "condition", "instance_id", "steps"]].copy().set_index("run")
    ordered = steps.sort_values(["run", "step_index"], kind="stable")
    position = ordered.groupby("run").cumcount()
    first_edit = position[ordered["phase"] == "edit"].groupby(ordered["run"]).min()
    table["steps_before_first_edit"] = first_edit.reindex(table.index).astype("Int64")
    run_ids, counts = run_counts(steps, phases)
    explore = phases.index("explore") if "explore" in phases else None
    rates = {}
    for run, matrix in zip(run_ids, counts, strict=True):
        out = matrix[explore].sum() if explore is not None else 0
        rates[run] = matrix[explore, explore] / out if out else np.nan
    table["explore_explore_rate"] = pd.Series(rates, dtype="Float64").reindex(table.index)
    read_sets = ordered.groupby("run")["files_read"].agg(lambda column: len({p for paths in column for p in paths}))
    table["distinct_files_read"] = read_sets.reindex(table.index).fillna(0).astype("int64")
    for role in role_names:
        if roles is None:
            table[f"{role}_visits"] = pd.array([pd.NA] * len(table), dtype="Int64")
        else:
            table[f"{role}_visits"] = role_visits(steps, roles, role).reindex(table.index).fillna(0).astype("Int64")
    for column in ("input_tokens", "output_tokens", "cost"):
        table[column] = runs.set_index("run")[column].reindex(table.index)
    return table.reset_index()
