"""`repoanchor demo`: the perturbation engine on a real project, proven equivalent by its tests.

Downloads toolz 1.0.0 from PyPI once (cached in .cache/), writes a variant with all 14 SPTs at
phi = 0.7 under runs/demo/, runs toolz's own test suite on both trees and prints what was
applied, what was skipped and why, and the differential-testing verdict.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from repoanchor.evals.projects import fetch_sdist
from repoanchor.perturb.metadata import variant_metadata, write_metadata
from repoanchor.perturb.results import summarize
from repoanchor.perturb.transforms import SPT_IDS
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validate import validate

PROJECT = ("toolz", "1.0.0")
TEST_CMD = f"{shlex.quote(sys.executable)} -m pytest -q -p no:randomly toolz/tests"
KEYWORDS = ["merge_with", "pipe"]


def run_demo(workdir: Path = Path("runs/demo"), seed: int = 0) -> int:
    console = Console()
    console.rule(f"RepoAnchor demo: all {len(SPT_IDS)} SPTs on {PROJECT[0]} {PROJECT[1]}")
    src = fetch_sdist(*PROJECT)
    variant = workdir / "variant"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    config = ApplyConfig(list(SPT_IDS), fraction=0.7, keywords=KEYWORDS, seed=seed)
    with console.status("transforming"):
        report = apply_tree(src, variant, config)
    write_metadata(workdir / "variant.json", variant_metadata(src, config, report))
    console.print(_summary_table(summarize(report.outcomes)))
    console.print(
        f"{len(report.changed_files)} of {report.files_considered} source files changed; "
        f"metadata in {workdir / 'variant.json'}"
    )
    with console.status("running the project's tests on both trees"):
        verdict = validate(src, variant, TEST_CMD, repeat=2)
    (workdir / "validation.json").write_text(verdict.to_json() + "\n")
    console.print(
        f"differential testing: {verdict.n_compared} tests compared, {len(verdict.changed)} changed, "
        f"{len(verdict.missing)} missing, {len(verdict.added)} added, {len(verdict.flaky)} flaky, "
        f"{len(verdict.compile_errors)} compile errors -> "
        + ("[green]EQUIVALENT[/green]" if verdict.ok else "[red]NOT EQUIVALENT[/red]")
    )
    return 0 if verdict.ok else 1


def _summary_table(summary: dict) -> Table:
    table = Table("transform", "files", "sites", "failed", "skipped (reason: count)", title="What was applied")
    for transform, entry in summary.items():
        skipped = ", ".join(f"{reason}: {count}" for reason, count in entry["skipped"].items())
        table.add_row(
            transform, str(entry["files_applied"]), str(entry["sites_applied"]), str(entry["failed"]), skipped
        )
    return table
