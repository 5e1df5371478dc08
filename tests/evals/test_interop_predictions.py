"""SWE-bench predictions out of a run matrix written as the pipeline writes it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.evals.runs.matrix import expand
from repoanchor.evals.runs.run_matrix import UNITS
from tests.support.synthetic_matrix import matrix_config, write_matrix, write_suite

SOURCES = ["o__p-1", "o__p-2"]


def test_predictions_hold_original_units_and_count_what_is_left_out(tmp_path):
    suites = [
        write_suite(tmp_path / "suites", "original", SOURCES),
        write_suite(tmp_path / "suites", "perturb", SOURCES),
    ]
    config = matrix_config(
        tmp_path, suites, repeats=2, conditions=[{"name": "plain"}, {"name": "anchor", "anchor": True}]
    )
    lost = "o__p-2"
    write_matrix(config, lambda unit: None if unit.instance_id == lost and unit.repeat == 2 else True, lambda u: 1.0)
    for unit in expand(config):
        attempt = config.out / UNITS / unit.unit_id / "attempt-1"
        if attempt.is_dir():
            (attempt / "patch.diff").write_text(f"diff --git a/x.py b/x.py\n# {unit.unit_id}\n")
    result = CliRunner().invoke(app, ["export", "preds", str(config.out), "--out", str(tmp_path / "preds")])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    # 2 conditions x 2 repeats; repeat 2 lost o__p-2's original unit to an infrastructure error.
    names = [
        f"m__mini-swe-agent__{condition}__r{repeat}.jsonl" for condition in ("anchor", "plain") for repeat in (1, 2)
    ]
    assert summary["files"] == dict(zip(names, [2, 1, 2, 1], strict=True))
    assert summary["left_out"]["not finished (infra_error)"] == 2  # one per condition
    assert next(k for k in summary["left_out"] if k.startswith("perturb: patch in the variant's coordinates"))
    (line,) = (tmp_path / "preds" / "m__mini-swe-agent__plain__r2.jsonl").read_text().splitlines()
    prediction = json.loads(line)
    assert set(prediction) == {"instance_id", "model_name_or_path", "model_patch"}
    assert (prediction["instance_id"], prediction["model_name_or_path"]) == ("o__p-1", "m__mini-swe-agent__plain")
    assert prediction["model_patch"].startswith("diff --git a/x.py b/x.py\n# ")
    every = CliRunner().invoke(
        app, ["export", "preds", str(config.out), "--out", str(tmp_path / "all"), "--include-variants"]
    )
    ids = {json.loads(line)["instance_id"] for line in (tmp_path / "all" / "m__mini-swe-agent__plain__r1.jsonl").open()}
    assert ids == {"o__p-1", "o__p-2", "o__p-1__perturb-0", "o__p-2__perturb-0"}
    assert json.loads(every.stdout)["left_out"] == {"not finished (infra_error)": 2}
