"""Every file in examples/ loads with the loader a user's would meet: the matrix YAMLs as `eval` reads them,
the dataset row as `suite build` does, the hints template as a run renders it."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor import prompts
from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.runs.matrix import MatrixConfig, expand

EXAMPLES = Path(__file__).parents[1] / "examples"


@pytest.mark.parametrize(
    ("name", "model"), [("matrix-gpt4o.yaml", "openai/gpt-4o"), ("matrix-oracle.yaml", "openai/oracle")]
)
def test_each_example_matrix_loads_and_is_commented(name: str, model: str):
    path = EXAMPLES / name
    config = MatrixConfig.load(path)
    assert [m.model for m in config.models] == [model]
    assert all(suite.resolve().is_relative_to(EXAMPLES.parent / "runs") for suite in config.suites)
    assert sum(line.lstrip().startswith("#") for line in path.read_text().splitlines()) >= 4


def test_the_real_model_example_uses_the_shipped_hints_file():
    config = MatrixConfig.load(EXAMPLES / "matrix-gpt4o.yaml")
    hints = {c.name: c.hints_file for c in config.conditions}
    assert hints["hints"] == EXAMPLES / "hints-example.j2"
    assert {c.name for c in config.conditions if c.anchor} == {"anchor"}


def test_the_oracle_example_expands_into_units_once_its_suites_exist(tmp_path: Path):
    from tests.support.matrix_suite import make_suite

    suites = [make_suite(tmp_path / kind, count=1).rename(tmp_path / kind / kind) for kind in ("original", "perturb")]
    config = MatrixConfig.load(EXAMPLES / "matrix-oracle.yaml").model_copy(update={"suites": suites})
    assert len(expand(config)) == 2 * 2  # two one-task suites x two conditions


def test_the_dataset_row_loads_as_a_swe_bench_row():
    loaded = load_dataset(EXAMPLES / "dataset-row.jsonl")
    (row,) = loaded.rows
    assert row["instance_id"] == "fixture__ledger-1"
    assert row["patch"].startswith("diff --git")
    assert not loaded.errors


def test_the_hints_example_renders_with_its_comment_left_out():
    text = prompts.hints(hints_file=str(EXAMPLES / "hints-example.j2"))
    assert text.startswith("Before editing, find the file that really runs")
    assert "{#" not in text


HELPED = ["run", "eval", "analyze", "grade", "results", "steps", "show"]
HELPED += ["suite build", "perturb apply", "perturb sample"]


@pytest.mark.parametrize("command", HELPED)
def test_each_main_command_shows_an_example_in_its_help(command: str):
    from typer.testing import CliRunner

    from repoanchor.evals.cli.main import app

    result = CliRunner().invoke(app, [*command.split(), "--help"])
    shown = " ".join(result.stdout.replace("│", " ").split())
    assert result.exit_code == 0
    assert "Example" in shown
    assert f"repoanchor {command} " in shown
