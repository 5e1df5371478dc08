"""A graded run matrix with known true effects, written as the real pipeline writes it (for `results` tests).

`draw_outcomes` draws every unit's outcome from per-instance probabilities with known effects: the
perturbed suite changes the rate by `perturb_effect`, the anchor condition by `anchor_effect` and hints by
`hints_effect` (each instance's own effect varies around the mean by ±`spread`, so the estimand is the
mean). `write_matrix` writes suites (tasks.jsonl, manifest, ground truth with a role map), matrix.json
and each unit's result.json and grade.json; outcomes come from a function of the unit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from repoanchor.evals.harness.suite_format import ground_truth_file
from repoanchor.evals.runs.matrix import MatrixConfig, Unit, expand
from repoanchor.evals.runs.run_matrix import MATRIX_FILE, RESULT, UNITS
from repoanchor.scaffolds.trajectories.trajectory import Action, Trajectory, save

CONDITIONS = [
    {"name": "plain"},
    {"name": "anchor", "anchor": True},
    {"name": "plain+hints", "hints": "structural"},
]


def write_suite(root: Path, kind: str, sources: list[str], variants: int = 1, families: tuple = ()) -> Path:
    """A suite folder: one task per source (original), `variants` per source (perturb/spt), or one per family."""
    suite = root / kind
    (suite / "ground_truth").mkdir(parents=True)
    rows = []
    for source in sources:
        names = [(source, None)] if kind == "original" else [(f"{source}__{kind}-{n}", None) for n in range(variants)]
        if kind == "extend":
            names = [(f"{source}__extend-{family}", family) for family in families]
        for task_id, family in names:
            rows.append(
                {
                    "instance_id": task_id, "problem_statement": "fix it", "base_commit": "HEAD", "repo": "o/p",
                    "version": "1.0", "repoanchor_suite": kind, "repoanchor_repo": f"repos/{task_id}",
                    "repoanchor_source_instance": source, "repoanchor_family": family,
                    "repoanchor_variant": task_id if kind == "spt" else None,
                }
            )  # fmt: skip
            metadata = {"path_resolution_map": [{"kind": "decoy", "visible_path": "pkg/decoy.py"}]}
            ground_truth_file(suite, task_id).write_text(json.dumps({"metadata": metadata}))  # as builders name it
    (suite / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (suite / "manifest.json").write_text(json.dumps({"dataset": {"name": "synthetic.jsonl"}, "config": {}}))
    return suite


def matrix_config(root: Path, suites: list[Path], repeats: int, conditions=None, name: str = "matrix") -> MatrixConfig:
    return MatrixConfig.model_validate(
        {
            "suites": [str(s) for s in suites],
            "scaffolds": ["mini-swe-agent"],
            "models": [{"name": "m", "model": "openai/m"}],
            "conditions": conditions or CONDITIONS,
            "repeats": repeats,
            "out": str(root / name),
        }
    )


def commands(unit: Unit) -> list[str]:
    """A perturbed task reads its decoy and two more files before editing; an original task reads one."""
    reads = ["cat pkg/decoy.py", "cat pkg/a.py", "cat pkg/b.py"] if unit.suite != "original" else ["cat pkg/a.py"]
    return ["ls", *reads, "sed -i s/a/b/ pkg/a.py", "python -m pytest -q"]


def write_trajectory(folder: Path, unit: Unit) -> None:
    actions = [
        Action(index=i, tool="bash", command=command, tool_input={"command": command}, turn_index=i, exit_code=0)
        for i, command in enumerate(commands(unit))
    ]
    save(Trajectory(source_format="mini-swe-agent-v2", instance_id=unit.instance_id, actions=actions),
         folder / "trajectory.json")  # fmt: skip


def write_matrix(config: MatrixConfig, outcome: Callable[[Unit], bool | None], cost: Callable[[Unit], float]) -> None:
    """Every unit's result.json, grade.json and trajectory; `outcome` None makes the unit an infrastructure error."""
    out = Path(config.out)
    (out / UNITS).mkdir(parents=True, exist_ok=True)
    (out / MATRIX_FILE).write_text(config.model_dump_json())
    for unit in expand(config):
        folder = out / UNITS / unit.unit_id
        folder.mkdir()
        resolved = outcome(unit)
        status = "infra_error" if resolved is None else "done"
        summary = {"steps": 10 + unit.repeat, "input_tokens": 1000, "output_tokens": 100}
        result = {
            "unit_id": unit.unit_id, "status": status, "infra_error": "rate_limit" if resolved is None else None,
            "exit_status": "Submitted" if resolved is not None else None, "cost": cost(unit),
            "attempts": [{"attempt": 1, "dir": "attempt-1"}], "summary": summary,
        }  # fmt: skip
        (folder / RESULT).write_text(json.dumps(result))
        if resolved is not None:
            write_trajectory(folder / "attempt-1", unit)
            grade = {"unit_id": unit.unit_id, "graded": True, "resolved": resolved, "provider": "synthetic"}
            (folder / "grade.json").write_text(json.dumps(grade))


class Effects:
    """Per-instance probabilities and effects drawn once from `seed`; `p(unit)` is the unit's true rate."""

    def __init__(self, sources: list[str], seed: int, perturb=-0.2, anchor=0.1, hints=0.0, spread=0.1):
        rng = np.random.default_rng(seed)
        self.base = dict(zip(sources, rng.uniform(0.35, 0.65, len(sources)), strict=True))
        self.perturb = dict(zip(sources, perturb + rng.uniform(-spread, spread, len(sources)), strict=True))
        self.anchor = dict(zip(sources, anchor + rng.uniform(-spread, spread, len(sources)), strict=True))
        self.hints = dict(zip(sources, hints + rng.uniform(-spread, spread, len(sources)), strict=True))

    def p(self, source: str, suite_kind: str, condition: str) -> float:
        rate = self.base[source]
        rate += self.perturb[source] if suite_kind in ("perturb", "spt") else 0.0
        rate += self.anchor[source] if condition.startswith("anchor") else 0.0
        rate += self.hints[source] if "hints" in condition else 0.0
        return rate
