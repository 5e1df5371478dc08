"""A row that carries its own install spec (`install_config`, as SWE-rebench's rows do for repositories swebench
knows nothing of) builds its venv, runs its tests and reads its log by it: before, such a row ran under this
interpreter with no dependencies and failed with "no test command (no eval_script, no spec)"."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.harness import eval_script, grading, instance_env
from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.harness.instance_spec import row_spec, spec_for

ONLINE = pytest.mark.skipif(os.environ.get("REPOANCHOR_OFFLINE") == "1", reason="REPOANCHOR_OFFLINE=1: uses PyPI")
CONFIG = {
    "python": "3.11",
    "pip_packages": ["pytest", "inflection==0.5.1"],
    "install": "python -c 'import inflection'",  # fails the run (and shows) where the venv lacks the pin
    "test_cmd": "pytest -rA -p no:cacheprovider",
    "log_parser": "parse_log_pytest",
    "reqs_path": None,
}


@pytest.mark.parametrize(
    "stored",
    [CONFIG, json.dumps(CONFIG), {**CONFIG, "pip_packages": np.array(CONFIG["pip_packages"]), "env_yml_path": np.nan}],
    ids=["mapping", "json", "parquet"],
)
def test_a_rows_own_spec_is_read_as_swebench_reads_its_own(stored):
    spec = row_spec({"instance_id": "acme__x-1", "install_config": stored})
    assert spec == {key: value for key, value in CONFIG.items() if value is not None}


def test_a_parquet_row_keeps_its_spec(tmp_path):
    path = tmp_path / "rows.parquet"
    pd.DataFrame([{"instance_id": "acme__x-1", "repo": "acme/x", "install_config": CONFIG}]).to_parquet(path)
    (row,) = pd.read_parquet(path).to_dict("records")
    assert spec_for(row)["pip_packages"] == CONFIG["pip_packages"]


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        ("{not json", "install_config is not JSON"),
        ([1, 2], "install_config is a list"),
        ({"install": "x"}, "no 'python'"),
    ],
)
def test_an_unusable_spec_is_refused_naming_the_row_and_the_field(stored, message):
    with pytest.raises(ValueError, match=f"acme__x-1: .*{message}"):
        row_spec({"instance_id": "acme__x-1", "install_config": stored})


@pytest.mark.parametrize("stored", [None, "", " ", {}, {"python": None}])
def test_without_a_spec_of_its_own_a_row_falls_back_to_swebenchs(stored):
    assert row_spec({"install_config": stored}) is None
    assert spec_for({"repo": "pallets/flask", "version": "2.3", "install_config": stored})["python"] == "3.11"


@ONLINE
def test_a_row_with_its_own_spec_is_graded_in_its_own_venv(tmp_path):
    _, dataset = materialize_fixture(tmp_path / "fixture")
    row = dict(load_dataset(dataset).by_id()["fixture__ledger-1"])
    del row["repoanchor_test_cmd"], row["repoanchor_log_parser"]  # what the fixture's rows carry instead
    row["install_config"] = CONFIG
    env = instance_env.prepare(row, "local", tmp_path / "w", repo_cache=tmp_path / "fixture", cache_dir=tmp_path / "v")
    assert env.route == "spec"
    assert env.python.startswith(str(tmp_path / "v"))
    assert eval_script.command_for(row).startswith("pytest -rA -p no:cacheprovider tests/test_parsing.py")
    assert eval_script.parser_name(row) == "parse_log_pytest"
    gold = grading.run_tests(tmp_path / "w", row, row["patch"], env)
    assert grading.grade(row, gold.outcomes, gold.status).resolved, gold.log[-3000:]
    empty = grading.run_tests(tmp_path / "w", row, "", env)
    assert grading.grade(row, empty.outcomes, empty.status).f2p.failure == row["FAIL_TO_PASS"]
