"""The variant's metadata: everything applied, where, the seed, and counts of every outcome.

It is written outside the variant tree (ground truth never enters an agent's environment) and
is byte-identical for the same input and seed: no timestamps, no absolute output paths.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from repoanchor.perturb.atomic import write_atomic
from repoanchor.perturb.results import outcome_to_dict, summarize
from repoanchor.perturb.tree import ApplyConfig, TreeReport

FORMAT = "repoanchor.variant/1"


def tool_version() -> str:
    try:
        return version("repoanchor")
    except PackageNotFoundError:
        return "unknown"


def variant_metadata(src: Path, config: ApplyConfig, report: TreeReport) -> dict:
    return {
        "format": FORMAT,
        "tool_version": tool_version(),
        "source": str(src.resolve()),
        "seed": config.seed,
        "config": {k: v for k, v in asdict(config).items() if k != "workers"},  # workers do not change output
        "min_python": list(report.project.min_python),
        "files_considered": report.files_considered,
        "files_parsed": report.files_parsed,
        "files_changed": sorted(report.changed_files),
        "interpreter_checks": report.interpreter_checks,
        "summary": summarize(report.outcomes),
        "file_skips": [asdict(s) for s in report.file_skips],
        "outcomes": [outcome_to_dict(o) for o in report.outcomes],
        "path_resolution_map": report.resolution,
        "integrity_errors": report.integrity_errors,
    }


def write_metadata(path: Path, metadata: dict) -> None:
    """Atomic write: a crash never leaves half a metadata file."""
    write_atomic(path, json.dumps(metadata, indent=2, sort_keys=True) + "\n")
