"""`suite build` instance selection: ids, regex and slices; a reproducible stratified sample of the shared SWE-bench
Verified data (nested largest-remainder allocation, stated below); `--transform`/`--option` ablations checked and
recorded; a selection written into the suite's manifest."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.suite import app
from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.suites.selection import Selection, SelectionError, allocate, select

VERIFIED = Path("/work/shared/data/swebench/SWE-bench_Verified_test.parquet")
needs_verified = pytest.mark.skipif(not VERIFIED.is_file(), reason="the shared SWE-bench Verified data is not here")
ROWS = [{"instance_id": f"{repo}__{repo}-{n}", "repo": repo} for repo in ("a", "b") for n in range(5)]
# 50 of Verified by repository (500 rows): each share is floor or ceil of 50 * n / 500, the four leftover
# places going to the largest remainders (pytest .9, requests .8, sympy .5, sphinx .4 over matplotlib .4 by size).
REPO_ALLOCATION_50 = {
    "django/django": 23, "sympy/sympy": 8, "sphinx-doc/sphinx": 5, "matplotlib/matplotlib": 3,
    "scikit-learn/scikit-learn": 3, "astropy/astropy": 2, "pydata/xarray": 2, "pytest-dev/pytest": 2,
    "psf/requests": 1, "pylint-dev/pylint": 1, "mwaskom/seaborn": 0, "pallets/flask": 0,
}  # fmt: skip


@pytest.fixture(scope="module")
def verified() -> list[dict]:
    return load_dataset(VERIFIED).rows


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> Path:
    """The demo fixture's dataset (three ledger instances), its clones beside it."""
    root = tmp_path_factory.mktemp("ledger")
    materialize_fixture(root)
    return root / "dataset.jsonl"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("a__a-1,b__b-4", ["a__a-1", "b__b-4"]),
        ("re:b__b-[0-2]", ["b__b-0", "b__b-1", "b__b-2"]),
        ("re:a", [f"a__a-{n}" for n in range(5)]),  # re.match: anchored at the start, as mini-swe-agent does
        ("0:2", ["a__a-0", "a__a-1"]),
        ("-2:", ["b__b-3", "b__b-4"]),
        ("::4", ["a__a-0", "a__a-4", "b__b-3"]),
    ],
)
def test_instances_take_ids_regex_and_slices(spec, expected):
    chosen, record = select(ROWS, Selection(instances=spec))
    assert [row["instance_id"] for row in chosen] == expected == record["ids"]


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (Selection(instances="a__a-1,zz"), "not in the dataset: zz"),
        (Selection(instances="re:c"), "no instance id matches"),
        (Selection(instances="re:("), "not a regular expression"),
        (Selection(sample=11), "only 10 instance(s)"),
        (Selection(sample=2, stratify=["difficulty"]), "column 'difficulty' is missing"),
    ],
)
def test_bad_selections_name_the_option(selection, message):
    with pytest.raises(SelectionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        select(ROWS, selection)


@needs_verified
def test_stratified_50_of_verified_is_reproducible_and_proportional(verified):
    selection = Selection(sample=50, stratify=["repo", "difficulty"], seed=7)
    first, record = select(verified, selection)
    again, _ = select(verified, selection)
    other, _ = select(verified, selection.model_copy(update={"seed": 8}))
    ids = [row["instance_id"] for row in first]
    assert len(ids) == 50 == len(set(ids))
    assert ids == [row["instance_id"] for row in again]
    assert set(ids) != {row["instance_id"] for row in other}
    by_repo = Counter(row["repo"] for row in first)
    assert {repo: by_repo.get(repo, 0) for repo in REPO_ALLOCATION_50} == REPO_ALLOCATION_50
    sizes = Counter(row["repo"] for row in verified)
    for repo, count in by_repo.items():  # every repository within one of its exact proportional share
        assert math.floor(50 * sizes[repo] / 500) <= count <= math.ceil(50 * sizes[repo] / 500)
    for item in record["allocation"]:  # the record's table is what was drawn, stratum by stratum
        stratum = item["stratum"]
        drawn = [r for r in first if r["repo"] == stratum["repo"] and r["difficulty"] == stratum["difficulty"]]
        assert len(drawn) == item["chosen"] <= item["available"]
    assert other
    assert Counter(row["repo"] for row in other) == by_repo


@needs_verified
def test_difficulty_is_proportional_inside_each_repository(verified):
    counts = allocate(verified, ["repo", "difficulty"], 50)
    django = {key[1]: n for key, n in counts.items() if key[0] == "django/django"}
    # django gets 23 of its 231: 117 / 92 / 22 by difficulty -> 11.6 / 9.2 / 2.2 -> 12 / 9 / 2
    assert django == {"15 min - 1 hour": 12, "<15 min fix": 9, "1-4 hours": 2}


@needs_verified
def test_min_per_stratum_covers_every_repository(verified):
    chosen, _ = select(verified, Selection(sample=50, stratify=["repo"], min_per_stratum=1))
    assert set(Counter(row["repo"] for row in chosen)) == {row["repo"] for row in verified}


@needs_verified
def test_dry_run_prints_the_same_ids_as_the_library(verified):
    args = [str(VERIFIED), "--sample", "50", "--stratify", "repo,difficulty", "--seed", "7", "--dry-run"]
    result = CliRunner().invoke(app, ["build", *args])
    assert result.exit_code == 0, result.output
    expected, _ = select(verified, Selection(sample=50, stratify=["repo", "difficulty"], seed=7))
    assert json.loads(result.output)["selection"]["ids"] == [row["instance_id"] for row in expected]


@pytest.mark.parametrize(
    ("args", "recorded"),
    [
        (["-t", "proxy-imports", "--option", "proxy-imports.depth=6"],
         {"transforms": ["proxy-imports"], "options": {"proxy-imports": {"depth": 6}}, "sampler": {}}),
        (["--suite", "spt", "-t", "if-else-swap", "-t", "dead-code"],
         {"transforms": ["proxy-imports", "runtime-target-masking", "constant-externalization"],
          "sampler": {"catalogue": ["if-else-swap", "dead-code"], "nt": 2}}),
        (["--suite", "spt", "--keywords-model", "openai/gpt-4o-mini"], {"keywords": {"model": "openai/gpt-4o-mini"}}),
    ],
)  # fmt: skip
def test_ablation_options_reach_the_suite_config(tmp_path, args, recorded):
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(json.dumps({**ROWS[0], "base_commit": "0" * 40, "problem_statement": "x", "patch": "d",
                                   "test_patch": "d", "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": []}) + "\n")  # fmt: skip
    result = CliRunner().invoke(app, ["build", str(dataset), *args, "--dry-run"])
    assert result.exit_code == 0, result.output
    config = json.loads(result.output)["config"]
    assert {key: config[key] for key in recorded} == recorded


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-t", "no-such"], "--transform/--option: unknown transform 'no-such'"),
        (["-t", "proxy-imports", "--option", "proxy-imports.deep=3"], "unknown option(s) deep; known: depth, fanout"),
        (["--option", "dead-code.x=1"], "options for dead-code, which is not among the transforms"),
        (["--suite", "spt", "--option", "if-else-swap.x=1"], "if-else-swap: unknown option(s) x; it takes no options"),
        (["--suite", "original", "-t", "dead-code"], "the original suite perturbs nothing"),
        (["--stratify", "repo"], "--stratify needs --sample N"),
        (["--instances", "re:zz"], "--instances: no instance id matches 'zz'"),
        (["--instances", "fixture__ledger-1", "--instances", "0:2"], "'0:2' must be given alone"),
    ],
)
def test_bad_build_options_exit_2_naming_the_option(ledger, args, message):
    result = CliRunner().invoke(app, ["build", str(ledger), *args, "--dry-run"])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_original_suite_records_its_selection(ledger, tmp_path):
    dataset = ledger
    out = tmp_path / "suite"
    args = ["build", str(dataset), "--suite", "original", "--instances", "re:.*-2", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--repo-cache", str(dataset.parent)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["selection"]["ids"] == ["fixture__ledger-2"]
    assert manifest["tasks"] == 1
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert [task["instance_id"] for task in tasks] == ["fixture__ledger-2"]


@pytest.mark.parametrize(
    "args",
    [
        ["--instances", "fixture__ledger-1", "--instances", "fixture__ledger-3"],
        ["--instances", "fixture__ledger-1,fixture__ledger-3"],
    ],
    ids=["repeated", "comma-separated"],
)
def test_repeated_instances_add_up(ledger, args):
    result = CliRunner().invoke(app, ["build", str(ledger), *args, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["selection"]["ids"] == ["fixture__ledger-1", "fixture__ledger-3"]


def test_dry_run_lists_refused_rows_and_stops_where_the_build_would(tmp_path):
    good = {**ROWS[0], "base_commit": "0" * 40, "problem_statement": "x", "patch": "d", "test_patch": "d",
            "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": []}  # fmt: skip
    bad = {**good, "instance_id": "b__b-9", "patch": ""}
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    result = CliRunner().invoke(app, ["build", str(dataset), "--dry-run"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert (plan["refused_rows"], plan["refused"]) == (1, ["line 2 (b__b-9): missing or empty patch"])
    dataset.write_text(json.dumps(bad) + "\n")
    nothing = CliRunner().invoke(app, ["build", str(dataset), "--dry-run"])
    assert nothing.exit_code == 2, nothing.output
    assert "no usable row: 1 refused, first line 1 (b__b-9): missing or empty patch" in nothing.stderr
