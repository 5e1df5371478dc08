"""Per-suite repeats: `suites: [{path: original, repeats: 20}, spt]`, and the jagged-frontier preset's 20 baseline
runs and one run per variant. Old configs expand into exactly the units (ids, order, fingerprints) they did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.evals.cli.presets import with_matrix_preset
from repoanchor.evals.runs.fingerprint import fingerprints
from repoanchor.evals.runs.matrix import MatrixConfig, MatrixConfigError, expand
from tests.support.matrix_suite import make_suite

MODEL = [{"name": "m", "model": "openai/scripted"}]


@pytest.fixture(scope="module")
def suites(tmp_path_factory) -> Path:
    """root/original (2 tasks, manifest kind original) and root/spt (2 tasks, kind spt)."""
    root = tmp_path_factory.mktemp("suites")
    for kind in ("original", "spt"):
        folder = make_suite(root / f"build-{kind}", count=2).rename(root / kind)
        (folder / "manifest.json").write_text(json.dumps({"suite": kind}))
    return root


def load(root: Path, **fields) -> MatrixConfig:
    config = {"suites": ["original", "spt"], "scaffolds": ["mini-swe-agent"], "models": MODEL, **fields}
    path = root / "matrix.yaml"
    path.write_text(yaml.safe_dump(config))
    return MatrixConfig.load(path)


def runs(units) -> list[tuple[str, str, int]]:
    return [(unit.suite, unit.instance_id, unit.repeat) for unit in units]


def test_an_old_config_expands_exactly_as_before(suites):
    units = expand(load(suites, repeats=2))
    ids = [f"{suite}__demo__calc-{n}__mini-swe-agent__m__plain__r{r}" for r in (1, 2)
           for suite in ("original", "spt") for n in (1, 2)]  # fmt: skip
    assert [unit.unit_id for unit in units] == ids  # repeat first, then suites in file order
    same = expand(load(suites, repeats=2, suites=[{"path": "original", "repeats": 2}, "spt"]))
    assert fingerprints(same, []) == fingerprints(units, [])


def test_a_suite_with_its_own_repeats(suites):
    config = load(suites, suites=[{"path": "original", "repeats": 3}, "spt"])
    assert config.suites == [suites / "original", suites / "spt"]
    assert config.suite_repeats == {"original": 3}
    assert runs(expand(config)) == [
        ("original", "demo__calc-1", 1), ("original", "demo__calc-2", 1), ("spt", "demo__calc-1", 1),
        ("spt", "demo__calc-2", 1), ("original", "demo__calc-1", 2), ("original", "demo__calc-2", 2),
        ("original", "demo__calc-1", 3), ("original", "demo__calc-2", 3),
    ]  # fmt: skip
    recorded = MatrixConfig.model_validate(config.model_dump(mode="json"))  # matrix.json read back
    assert runs(expand(recorded)) == runs(expand(config))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"suites": [{"path": "original", "repeats": 0}]}, "suites.0.repeats: Input should be greater than"),
        ({"suites": [{"path": "original", "repeats": 2, "times": 2}]}, "suites.0.times: Extra inputs"),
        ({"suite_repeats": {"orig": 2}}, "suite_repeats: no suite labelled ['orig']"),
    ],
)
def test_bad_suite_repeats_are_named(suites, fields, message):
    with pytest.raises(MatrixConfigError) as error:
        load(suites, **fields)
    assert message in str(error.value)


def test_jagged_frontier_runs_the_baseline_20_times_and_each_variant_once(suites):
    matrix = with_matrix_preset(load(suites, repeats=4), "jagged-frontier")
    assert matrix.suite_repeats == {"original": 20, "spt": 1}
    counted = {}
    for suite, _, _ in runs(expand(matrix)):
        counted[suite] = counted.get(suite, 0) + 1
    assert counted == {"original": 2 * 20, "spt": 2 * 1}
    shown = yaml.safe_load(CliRunner().invoke(app, ["presets", "show", "jagged-frontier"]).output)
    assert shown["run"]["suite_repeats"] == {"original": 20, "spt": 1}
    assert matrix.model_dump(mode="json")["preset"] == shown  # what matrix.json records
    assert not any("20 baseline runs" in item for item in shown["not_reproduced"])


def test_a_preset_without_suite_repeats_leaves_the_matrix_alone(suites):
    config = load(suites, suites=[{"path": "original", "repeats": 3}, "spt"])
    assert with_matrix_preset(config, "repomirage").suite_repeats == {"original": 3}
