"""`make demo`: the whole pipeline on the embedded ledger fixture, offline, in a few minutes.

1. Materialise the fixture project (a git repository) and its SWE-bench-format dataset.
2. Build the suites — the original baseline, RepoMirage-Perturb, SPT variants, RepoMirage-Extend — each
   task validated by running the project's tests.
3. Run a matrix: both scaffolds × {plain, anchor} × {no hints, structural hints} on the original and
   perturbed tasks, and mini-swe-agent once more (plain) on the SPT variants and Extend tasks. With no
   `--model`, the model is the ORACLE policy (evals/demo/oracle.py) served by the scripted server: it
   applies each task's ground-truth patch. Every output says so.
4. Grade every run from its files, write `repoanchor results`' tables and the trajectory analysis into the report.
Everything lands under `out` and a rerun resumes (suites and finished runs are reused).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from rich.console import Console

from repoanchor.evals.demo.oracle import ORACLE_MODEL, OraclePolicy, Truth, patched_files
from repoanchor.evals.harness.suite_format import ground_truth_file, read_suite_tasks

ORACLE_NOTE = "MODEL: ORACLE POLICY (scripted; applies the ground-truth patch; not a language model)."
SUITES = ("original", "perturb", "spt", "extend")
RUN_SUITES = ("original", "perturb")
# SPT variants and Extend tasks run once more with mini-swe-agent, plain only: enough for the Jagged Frontier
# and Extend tables without doubling the demo's time.
VARIANT_SUITES = ("spt", "extend")
CONDITIONS = [
    {"name": "plain", "anchor": False, "hints": "none"},
    {"name": "plain+hints", "anchor": False, "hints": "structural"},
    {"name": "anchor", "anchor": True, "hints": "none"},
    {"name": "anchor+hints", "anchor": True, "hints": "structural"},
]
# OpenCode takes ~10 s a run (its own startup and export), so the demo gives it the two anchor conditions
# only; mini-swe-agent runs the full grid. `repoanchor eval` runs any grid you configure.
SCAFFOLD_CONDITIONS = {
    "mini-swe-agent": ("plain", "plain+hints", "anchor", "anchor+hints"),
    "opencode": ("plain", "anchor"),
}


def build_suites(out: Path, workers: int, console: Console) -> dict[str, Path]:
    from repoanchor.evals.demo.fixture_project import materialize_fixture
    from repoanchor.evals.suites.build import build_suite
    from repoanchor.evals.suites.original import build_original_suite

    fixture = out / "fixture"
    dataset = fixture / "dataset.jsonl"
    if not dataset.is_file():
        materialize_fixture(fixture)
    suites = {kind: out / "suites" / kind for kind in SUITES}
    build_original_suite(dataset, suites["original"], repo_cache=fixture)
    for kind in SUITES[1:]:
        report = build_suite(dataset, kind, suites[kind], repo_cache=fixture, seed=0, n_variants=2, workers=workers)
        console.print(f"suite {kind}: {report.tasks} tasks, {report.rejected} rejected ({report.seconds:.0f} s)")
    return suites


def validate_suites(suites: dict[str, Path], workers: int, console: Console) -> dict[str, dict]:
    from repoanchor.evals.suites.check import validate_suite

    results = {}
    for kind in SUITES[1:]:
        results[kind] = result = validate_suite(suites[kind], workers=workers)
        console.print(f"validate {kind}: {result['passed']}/{result['tasks']} tasks pass from the suite alone")
        for failed in result["failed"]:
            console.print(f"  [red]{failed['task_id']}: {failed['reasons'][:2]}[/]")
    return results


def oracle_truths(suites: list[Path]) -> dict[str, list[Truth]]:
    from repoanchor.evals.suites.export import tree_id

    truths: dict[str, list[Truth]] = {}
    for suite in suites:
        for row in read_suite_tasks(suite):
            repo = suite / row.repoanchor_repo
            truth = json.loads(ground_truth_file(suite, row.instance_id).read_text(encoding="utf-8"))
            patch = extend_patch(repo, truth["extend"]) if truth.get("extend") else truth["row"]["patch"]
            truth = Truth(patch=patch, files=patched_files(patch), issue=row.problem_statement)
            truths.setdefault(tree_id(repo), []).append(truth)
    return truths


def extend_patch(repo: Path, extend: dict) -> str:
    """An Extend task's answer as a patch: its solution's patch, or the diff that writes its solution's files."""
    solution = extend["ground_truth"]["solution"]
    if solution.get("patch"):
        return solution["patch"]
    with tempfile.TemporaryDirectory(prefix="oracle-") as scratch:
        work = Path(scratch) / "repo"
        subprocess.run(["git", "clone", "-q", str(repo), str(work)], check=True, capture_output=True)
        for path, text in solution["files"].items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text, encoding="utf-8")
        subprocess.run(["git", "add", "-A"], cwd=work, check=True, capture_output=True)
        diff = subprocess.run(["git", "diff", "--cached", "--binary"], cwd=work, check=True, capture_output=True)
    return diff.stdout.decode("utf-8")


def rates_table(rates, caption: str):
    from rich.table import Table

    table = Table(
        "suite", "scaffold", "condition", "resolved", "rate", "95% CI", "infra", title="Resolve rates", caption=caption
    )
    for row in rates.to_dict("records"):
        interval = f"[{row['low']:.2f}, {row['high']:.2f}]" if row["graded"] else ""
        rate = f"{row['rate']:.2f}" if row["graded"] else "n/a"
        resolved = f"{row['resolved']}/{row['graded']}"
        table.add_row(row["suite"], row["scaffold"], row["condition"], resolved, rate, interval, str(row["infra"]))
    return table


def matrix_config(out: Path, suites: list[Path], model: dict, scaffold: str, workers: int, name: str | None = None,
                  conditions: tuple[str, ...] | None = None):  # fmt: skip
    from repoanchor.evals.runs.matrix import MatrixConfig

    wanted = conditions or SCAFFOLD_CONDITIONS.get(scaffold, tuple(c["name"] for c in CONDITIONS))
    return MatrixConfig.model_validate(
        {
            "suites": [str(s) for s in suites],
            "scaffolds": [scaffold],
            "models": [model],
            "conditions": [c for c in CONDITIONS if c["name"] in wanted],
            "repeats": 1,
            "limits": {"steps": 30, "cost": 0, "wall_seconds": 600, "command_timeout": 120},
            "workers": workers,
            "out": str(out / "runs" / (name or scaffold)),
        }
    )


def run_demo(
    out: Path = Path("runs/demo"),
    model: str | None = None,
    api_base: str | None = None,
    workers: int = 2,
    scaffolds: tuple[str, ...] = ("mini-swe-agent", "opencode"),
) -> int:
    from repoanchor.evals.runs.executors import LocalPool
    from repoanchor.evals.runs.run_matrix import run_matrix
    from repoanchor.scaffolds.models.scripted_server import ScriptedServer

    console = Console()
    out = Path(out).resolve()
    suites = build_suites(out, workers, console)
    validate_suites(suites, workers, console)
    run_suites = [suites[kind] for kind in RUN_SUITES]
    server = None
    if model is None:
        # litellm's openai/ route insists on a key; the oracle's loopback server ignores it. Not a secret.
        os.environ.setdefault("OPENAI_API_KEY", "oracle-needs-no-key")
        every = run_suites + [suites[kind] for kind in VARIANT_SUITES]
        server = ScriptedServer(responder=OraclePolicy(oracle_truths(every)))
        spec = {"name": "oracle", "model": ORACLE_MODEL, "api_base": server.base_url}
        console.print(f"[bold yellow]{ORACLE_NOTE}[/]")
    else:
        spec = {"name": model.replace("/", "-"), "model": model, "api_base": api_base}
    configs, crashed = [], 0
    try:
        executor = LocalPool(workers)
        try:
            for scaffold in scaffolds:
                configs.append(matrix_config(out, run_suites, spec, scaffold, workers))
            if "mini-swe-agent" in scaffolds:
                variants = [suites[kind] for kind in VARIANT_SUITES]
                configs.append(matrix_config(out, variants, spec, "mini-swe-agent", workers, "variants", ("plain",)))
            for config in configs:
                # The oracle's server gets a new port each time, and the port is part of every unit's fingerprint:
                # its matrices run afresh (a minute); a real model's resume where they stopped.
                summary = run_matrix(config, executor=executor, redo=model is None)
                crashed += summary.statuses.get("crashed", 0)
                console.print(f"matrix {Path(config.out).name}: {summary.statuses}")
        finally:
            executor.close()
    finally:
        if server is not None:
            server.close()
    from repoanchor.evals.demo.report import write_demo_report

    report = write_demo_report(configs, out / "report", ORACLE_NOTE if model is None else f"MODEL: {model}")
    rates = report["results"].tables["outcomes"][1]
    console.print(rates_table(rates, ORACLE_NOTE if model is None else f"model {model}"))
    console.print(f"report: {report['html']}")
    return 0 if crashed == 0 else 1
