"""Dataset loading: every published form, per-row checks reported by instance id, the real SWE-bench files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repoanchor.evals.demo.fixture_project import DATASET_PATH, fixture_rows, materialize_fixture
from repoanchor.evals.harness import datasets
from repoanchor.evals.harness.datasets import DatasetError, load_dataset
from repoanchor.evals.harness.task_load import load_task
from tests.support.shared import shared_path


def good_row(instance_id: str = "acme__widgets-1", **changes) -> dict:
    row = {
        "instance_id": instance_id,
        "repo": "acme/widgets",
        "base_commit": "a" * 40,
        "problem_statement": "It breaks.",
        "patch": "diff --git a/w.py b/w.py\n",
        "test_patch": "diff --git a/test_w.py b/test_w.py\n",
        "FAIL_TO_PASS": json.dumps(["test_w.py::test_new"]),
        "PASS_TO_PASS": [],
    }
    return {**row, **changes}


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows) + "\n")
    return path


@pytest.mark.parametrize("name", ["SWE-bench_Verified_test", "SWE-bench_Lite_dev", "swebench_dev"])
def test_shared_parquet_files_load_without_malformed_rows(name):
    path = shared_path("data", "swebench", f"{name}.parquet")
    if not path.is_file():
        pytest.skip(f"no shared SWE-bench data at {path}")
    loaded = load_dataset(path)
    assert loaded.errors == []
    assert all(isinstance(row["FAIL_TO_PASS"], list) and row["FAIL_TO_PASS"] for row in loaded.rows)
    if name == "SWE-bench_Verified_test":
        assert len(loaded.rows) == 500
        assert loaded.by_id()["pallets__flask-5014"]["FAIL_TO_PASS"] == [
            "tests/test_blueprints.py::test_empty_name_not_allowed"
        ]


def test_fixture_dataset_is_well_formed():
    loaded = load_dataset(DATASET_PATH)
    assert loaded.errors == []
    assert len(loaded.rows) >= 3
    assert any(len(datasets_files(row["patch"])) >= 2 for row in loaded.rows)
    for row in loaded.rows:
        assert row["repo"] == "fixture/ledger"
        assert not any(name.startswith("tests/") for name in datasets_files(row["patch"]))
        assert all(name.startswith("tests/") for name in datasets_files(row["test_patch"]))


def datasets_files(patch: str) -> list[str]:
    from repoanchor.evals.harness.grading import patched_files

    return patched_files(patch)


def test_materialized_fixture_has_the_shipped_commit(tmp_path):
    repo, dataset = materialize_fixture(tmp_path)
    rows = load_dataset(dataset).rows
    assert {row["base_commit"] for row in rows} == {fixture_rows()[0]["base_commit"]}
    assert (tmp_path / "fixture__ledger" / ".git").exists()
    task = load_task(f"{dataset}#fixture__ledger-2", repo_cache=tmp_path)
    assert task.repo == repo.resolve()


def test_malformed_jsonl_rows_are_reported_and_the_rest_load(tmp_path):
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [
            good_row("ok-1"),
            "{not json",
            good_row("no-patch", patch=""),
            good_row("bad-f2p", FAIL_TO_PASS="test_a, test_b"),
            {k: v for k, v in good_row("").items() if k != "instance_id"},
            good_row("ok-1"),
            good_row("ok-2", PASS_TO_PASS=None),
            ["a", "list"],
            good_row("caddyserver__caddy-6411", repo="caddyserver/caddy", version="6411"),
            good_row("acme__x-1", install_config={"install": "pip install -e ."}),
            good_row("acme__x-2", install_config={"python": "3.11", "install": "pip install -e ."}),
        ],
    )
    loaded = load_dataset(path)
    assert [row["instance_id"] for row in loaded.rows] == ["ok-1", "acme__x-2"]
    messages = [str(error) for error in loaded.errors]
    assert messages[0].startswith("line 2: not JSON")  # the file's own line numbers, 1-based
    assert messages[1:] == [
        "line 3 (no-patch): missing or empty patch",
        "line 4 (bad-f2p): FAIL_TO_PASS is a string that is not a JSON list",
        "line 5: missing or empty instance_id",
        "line 6 (ok-1): duplicate instance_id",
        "line 7 (ok-2): PASS_TO_PASS is missing",
        "line 8: not an object but list",
        # SWE-bench Multilingual's rows: swebench's spec installs a Go toolchain and names no Python
        "line 9 (caddyserver__caddy-6411): not a Python project: swebench's spec for caddyserver/caddy 6411 names no "
        "Python (it installs with ['go mod tidy']); RepoAnchor's transforms and environments are Python's",
        "line 10 (acme__x-1): install_config names no 'python' (the version its venv is built on)",
    ]


def test_json_list_single_row_and_keyed_object(tmp_path):
    (tmp_path / "list.json").write_text(json.dumps([good_row("a"), good_row("b")]))
    (tmp_path / "one.json").write_text(json.dumps(good_row("a")))
    keyed = {"a": {k: v for k, v in good_row().items() if k != "instance_id"}, "b": good_row("b")}
    (tmp_path / "keyed.json").write_text(json.dumps(keyed))
    assert [r["instance_id"] for r in load_dataset(tmp_path / "list.json").rows] == ["a", "b"]
    assert [r["instance_id"] for r in load_dataset(tmp_path / "one.json").rows] == ["a"]
    assert [r["instance_id"] for r in load_dataset(tmp_path / "keyed.json").rows] == ["a", "b"]
    (tmp_path / "bad.json").write_text('"just a string"')
    with pytest.raises(DatasetError, match="expected a list of rows"):
        load_dataset(tmp_path / "bad.json")


def test_parquet_with_list_columns(tmp_path):
    import pandas as pd

    rows = [
        good_row("a", FAIL_TO_PASS=["t::x"], PASS_TO_PASS=["t::y"]),
        good_row("b", repo=None, FAIL_TO_PASS=["t::z"], PASS_TO_PASS=[]),
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "d.parquet")
    loaded = load_dataset(tmp_path / "d.parquet")
    assert loaded.rows[0]["FAIL_TO_PASS"] == ["t::x"]
    assert loaded.rows[0]["PASS_TO_PASS"] == ["t::y"]
    assert [str(e) for e in loaded.errors] == ["row 1 (b): missing or empty repo"]


def test_save_to_disk_folder(tmp_path):
    import datasets as hf

    hf.Dataset.from_list([good_row("a"), good_row("b")]).save_to_disk(str(tmp_path / "single"))
    assert [r["instance_id"] for r in load_dataset(tmp_path / "single").rows] == ["a", "b"]
    both = hf.DatasetDict({"dev": hf.Dataset.from_list([good_row("d")]), "test": hf.Dataset.from_list([good_row("t")])})
    both.save_to_disk(str(tmp_path / "dict"))
    assert [r["instance_id"] for r in load_dataset(tmp_path / "dict", split="test").rows] == ["t"]
    with pytest.raises(DatasetError, match="name a split"):
        load_dataset(tmp_path / "dict")
    # as the error says, FOLDER:SPLIT names it too, an absolute path included (not read as a Hugging Face id)
    assert [r["instance_id"] for r in load_dataset(f"{tmp_path / 'dict'}:dev").rows] == ["d"]


def test_hub_id_fails_clearly_offline(monkeypatch):
    import datasets as hf

    def offline(name, split=None):
        raise ConnectionError(f"Couldn't reach '{name}' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(hf, "load_dataset", offline)
    with pytest.raises(DatasetError, match="could not load from the Hugging Face Hub.*parquet/JSONL"):
        load_dataset("princeton-nlp/SWE-bench_Verified:test")


def test_unknown_source(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_dataset(tmp_path / "missing.jsonl")
    assert datasets.HUB_ID.match("owner/name:split")


def test_parquet_timestamps_and_nested_arrays_load_as_plain_json_values(tmp_path):
    """A parquet `created_at` column of timestamps (pandas writes one from to_datetime) and SWE-rebench's nested
    install_config lists (arrays, as parquet gives them back) load as text and lists: the suite writes rows as
    JSON, where either had stopped the build with "not JSON serializable"."""
    import pandas as pd

    config = {"python": "3.11", "install": "pip install -e .", "pip_packages": ["pytest", "numpy"]}
    frame = pd.DataFrame([good_row("acme__x-1", created_at="2022-03-03T15:14:54Z", install_config=config)])
    frame["created_at"] = pd.to_datetime(frame["created_at"])
    frame.to_parquet(tmp_path / "d.parquet")
    (row,) = load_dataset(tmp_path / "d.parquet").rows
    assert row["created_at"] == "2022-03-03T15:14:54+00:00"
    assert row["install_config"]["pip_packages"] == ["pytest", "numpy"]
    json.dumps(row)  # the suite's own write


@pytest.mark.parametrize(("version", "says"), [(0.2, "0.2"), (3, "3"), ("0.20", None)])
def test_a_version_stored_as_a_number_is_refused_naming_why(tmp_path, version, says):
    """0.20 read as a number is 0.2 (another scikit-learn version, with no spec): refused rather than mis-read."""
    loaded = load_dataset(write_jsonl(tmp_path / "d.jsonl", [good_row("acme__x-1", version=version)]))
    if says is None:
        assert (loaded.errors, loaded.rows[0]["version"]) == ([], "0.20")
    else:
        (error,) = loaded.errors
        assert error.message.startswith(f"version is a number ({says}), not text: as a number 0.20 is 0.2")


def test_an_install_config_python_stored_as_a_number_is_refused(tmp_path):
    row = good_row("acme__x-1", install_config={"python": 3.10, "install": "pip install -e ."})
    (error,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [row])).errors
    assert "install_config's python is a number (3.1), not text: as a number 3.10 is 3.1" in error.message


def test_lower_case_test_lists_are_named_in_the_refusal(tmp_path):
    """SWE-bench Pro spells them `fail_to_pass`/`pass_to_pass`."""
    row = {key.lower() if key in datasets.TEST_LISTS else key: value for key, value in good_row("a__b-1").items()}
    (error,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [row])).errors
    assert error.message == "FAIL_TO_PASS is missing (the row has 'fail_to_pass': rename it 'FAIL_TO_PASS')"


def test_ids_that_would_share_a_folder_are_refused_after_the_first(tmp_path):
    rows = [good_row("edge__slash/id-9"), good_row("edge__slash_id-9"), good_row("edge__slash_id-10")]
    loaded = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows))
    assert [row["instance_id"] for row in loaded.rows] == ["edge__slash/id-9", "edge__slash_id-10"]
    (error,) = loaded.errors
    assert str(error) == (
        "line 2 (edge__slash_id-9): names the same folder as 'edge__slash/id-9' ('edge__slash_id-9': ids name "
        "folders, / and such become _)"
    )
