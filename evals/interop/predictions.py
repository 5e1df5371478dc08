"""SWE-bench predictions from a run matrix: `{instance_id, model_name_or_path, model_patch}` per line.

One file per (model, scaffold, condition, repeat), since a predictions file holds one patch per instance.
Only patches in the original repository's coordinates can go to the official harness: units of an original
suite (and ad-hoc tasks). A Perturb, SPT or Extend task's patch applies to its variant, not to the dataset's
repository, and remapping it back is not generally possible (a proxy chain, a masked module or an
externalised constant has no place in the original): those units are left out and counted, unless
`include_variants`, which writes them under their task ids for a harness given the suite as its dataset.
Units that did not finish (infrastructure errors, crashes, pending) are left out and counted too.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from repoanchor.evals.analysis.results.units import load_config
from repoanchor.evals.harness.suite_format import read_suite_tasks
from repoanchor.evals.runs.grade_runs import unit_patch
from repoanchor.evals.runs.matrix import AD_HOC_SUITE, expand
from repoanchor.evals.runs.run_matrix import RESULT, UNITS, read_result
from repoanchor.perturb.atomic import write_atomic

VARIANT_NOTE = (
    "patch in the variant's coordinates (not the dataset's repository): grade it with `repoanchor grade`, "
    "or pass --include-variants to write it under its task id for a harness given the suite as its dataset"
)


def _suite_kinds(config) -> dict[str, dict[str, str]]:
    """Suite label -> task id -> its kind (original, perturb, spt, extend)."""
    return {
        suite.name: {row.instance_id: row.repoanchor_suite for row in read_suite_tasks(suite)}
        for suite in config.suites
    }


def export_predictions(run: Path, out: Path, *, include_variants: bool = False) -> dict:
    """Write the predictions files of the matrix `run` (its YAML or out folder) into `out`; a summary."""
    config = load_config(run)
    kinds = _suite_kinds(config)
    files: dict[str, list[dict]] = {}
    left_out: Counter[str] = Counter()
    for unit in expand(config):
        folder = Path(config.out) / UNITS / unit.unit_id
        result = read_result(folder / RESULT)
        if result is None or result.get("status") != "done":
            left_out[f"not finished ({result.get('status') if result else 'pending'})"] += 1
            continue
        kind = "original" if unit.suite == AD_HOC_SUITE else kinds[unit.suite].get(unit.instance_id, "original")
        if kind != "original" and not include_variants:
            left_out[f"{kind}: {VARIANT_NOTE}"] += 1
            continue
        name = f"{unit.model}__{unit.scaffold}__{unit.condition}"
        prediction = {
            "instance_id": unit.instance_id,
            "model_name_or_path": name,
            "model_patch": unit_patch(folder, result),
        }
        files.setdefault(f"{name}__r{unit.repeat}", []).append(prediction)
    Path(out).mkdir(parents=True, exist_ok=True)
    for stem, predictions in sorted(files.items()):
        write_atomic(Path(out) / f"{stem}.jsonl", "".join(json.dumps(p) + "\n" for p in predictions))
    return {
        "out": str(out),
        "files": {f"{stem}.jsonl": len(predictions) for stem, predictions in sorted(files.items())},
        "left_out": dict(sorted(left_out.items())),
    }
