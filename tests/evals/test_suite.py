"""Suite builds on the embedded fixture: Perturb, SPT and Extend tasks that validate by tests, the remapped
gold patch, rejections that keep their reason, and `suite validate` (passing, and failing on a corrupted
ground truth). Suites are built once per session and shared with the leak and resume tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.suite import app
from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.harness.suite_format import as_task, read_suite_tasks
from repoanchor.evals.suites.build import build_suite
from repoanchor.evals.suites.check import validate_suite
from repoanchor.evals.suites.export import sha256_file, tree_id
from repoanchor.evals.suites.extend import FAMILIES
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.env_images import fixture_env_image_fixture  # noqa: F401

INSTANCES = ["fixture__ledger-1", "fixture__ledger-2", "fixture__ledger-3"]
EXTEND_INSTANCE = "fixture__ledger-2"
"""The fixture instance with material for all four Extend families (its gold patch touches two files)."""
NOT_APPLYING = "diff --git a/ledger/money.py b/ledger/money.py\n--- a/ledger/money.py\n+++ b/ledger/money.py\n"
NOT_APPLYING += "@@ -1,1 +1,1 @@\n-this line is not in the file\n+neither is this one\n"
_BUILT: dict[str, Path] = {}


def fixture_dataset(factory) -> tuple[Path, Path]:
    """(repo cache, dataset) of the materialized fixture, made once per session."""
    if "fixture" not in _BUILT:
        root = factory.mktemp("fixture")
        materialize_fixture(root)
        _BUILT["fixture"] = root
    return _BUILT["fixture"], _BUILT["fixture"] / "dataset.jsonl"


def built_suite(kind: str, factory) -> Path:
    """The fixture's suite of `kind` (seed 0, 2 SPT variants, 2 workers), built once per session.

    Extend is built on EXTEND_INSTANCE alone: every family's self-check runs the tests four times,
    and that one instance already yields all four families."""
    if kind not in _BUILT:
        cache, dataset = fixture_dataset(factory)
        out = factory.mktemp(f"suite-{kind}") / "suite"
        if kind == "extend":
            row = load_dataset(dataset).by_id()[EXTEND_INSTANCE]
            dataset = out.parent / "extend.jsonl"
            dataset.write_text(json.dumps(row) + "\n")
        build_suite(dataset, kind, out, repo_cache=cache, seed=0, n_variants=2, workers=2, progress=False)
        _BUILT[kind] = out
    return _BUILT[kind]


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def truth(suite: Path, task_id: str) -> dict:
    return json.loads((suite / "ground_truth" / f"{task_id}.json").read_text())


def check_manifest(suite: Path) -> dict:
    manifest = json.loads((suite / "manifest.json").read_text())
    tasks = read_suite_tasks(suite)  # also refuses any row carrying ground truth
    assert manifest["counts"]["tasks"] == len(tasks)
    assert manifest["hashes"]["tasks.jsonl"] == sha256_file(suite / "tasks.jsonl")
    for task in tasks:
        assert tree_id(suite / task.repoanchor_repo) == manifest["hashes"]["repos"][task.instance_id]
        assert (
            sha256_file(suite / "ground_truth" / f"{task.instance_id}.json")
            == (manifest["hashes"]["ground_truth"][task.instance_id])
        )
        assert as_task(suite, task).repo.is_dir()
    assert set(manifest["tools"]) == {"repoanchor", "libcst", "swebench", "python", "git"}
    return manifest


def test_perturb_suite_every_instance_validates_with_the_remapped_gold_patch(tmp_path_factory):
    suite = built_suite("perturb", tmp_path_factory)
    assert rows(suite / "rejected.jsonl") == []
    manifest = check_manifest(suite)
    assert [task["instance_id"] for task in rows(suite / "tasks.jsonl")] == INSTANCES
    assert manifest["seed"] == 0
    assert manifest["config"]["transforms"] == [
        "proxy-imports",
        "runtime-target-masking",
        "constant-externalization",
    ]
    for instance in INSTANCES:
        record = truth(suite, instance)
        after = record["validation"]["after"]
        assert (after["f2p_failing"], after["p2p_failing"]) == ([], [])
        assert after["f2p_passing"] == record["row"]["FAIL_TO_PASS"]
        assert record["validation"]["before"]["f2p_passing"] == []
        remap = record["remap"]
        # The gold files are masked: the fix lands in their hidden implementations, not in the forwarders.
        assert remap["outside_gold"] == [], "a file the gold patch does not touch changed between V and V'"
        assert remap["remapped"]["added"] >= remap["gold"]["added"]
    for instance, stages in manifest["timing"]["instance_stages"].items():  # where each instance's time went
        assert set(stages) == {"environment", "perturbation", "imports", "tests", "bookkeeping"}
        assert min(stages["perturbation"], stages["tests"]) > 0
        assert min(stages.values()) >= 0
        assert sum(stages.values()) == pytest.approx(manifest["timing"]["instance_seconds"][instance], abs=0.01)
    for task in rows(suite / "tasks.jsonl"):
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=suite / task["repoanchor_repo"], capture_output=True)
        assert (
            task["base_commit"]
            == head.stdout.decode().strip()
            == truth(suite, task["instance_id"])["row"]["base_commit"]
        )


def test_spt_suite_n_variants_per_instance_all_validate(tmp_path_factory):
    suite = built_suite("spt", tmp_path_factory)
    # The seed-0 draw for ledger-3's first variant finds no site on that small project (dead-string-assign
    # has no keyword; the others no candidate): rejected, never kept as a copy of the original.
    (rejected,) = rows(suite / "rejected.jsonl")
    assert (rejected["task_id"], rejected["stage"]) == ("fixture__ledger-3__spt-0", "perturb")
    assert rejected["reason"].startswith("no site was rewritten: ")
    check_manifest(suite)
    tasks = rows(suite / "tasks.jsonl")
    expected = [f"{i}__spt-{n}" for i in INSTANCES for n in (0, 1)]
    assert [t["instance_id"] for t in tasks] == [name for name in expected if name != rejected["task_id"]]
    assert all(t["repoanchor_source_instance"] in INSTANCES for t in tasks)
    for task in tasks:
        record = truth(suite, task["instance_id"])
        assert record["validation"]["after"]["f2p_failing"] == []
        assert len(record["plan"]["transforms"]) == 3
        # SPTs rewrite file by file with per-file seeds: the remapped patch touches exactly the gold files.
        assert record["remap"]["remapped"]["files"] == record["remap"]["gold"]["files"]
    variants = {truth(suite, t["instance_id"])["seeds"]["variant_seed"] for t in tasks}
    assert len(variants) == len(tasks)


def test_extend_suite_builds_every_family_and_every_task_self_checks(tmp_path_factory):
    suite = built_suite("extend", tmp_path_factory)
    check_manifest(suite)
    assert rows(suite / "rejected.jsonl") == []
    tasks = rows(suite / "tasks.jsonl")
    assert [t["repoanchor_family"] for t in tasks] == list(FAMILIES)
    for task in tasks:
        record = truth(suite, task["instance_id"])
        assert record["extend"]["task"]["self_check"]["status"] == "passed", record["extend"]["task"]
        assert task["repoanchor_allowed_files"] == record["extend"]["task"]["allowed_files"]
    # Each family's build counts as perturbation, its self-check (probes, tests, the grader) as tests.
    stages = json.loads((suite / "manifest.json").read_text())["timing"]["instance_stages"][EXTEND_INSTANCE]
    assert min(stages["perturbation"], stages["tests"]) > 0
    # Extend is cut from the very repository the Perturb suite gives the agent (multi_file erases nothing).
    perturb = built_suite("perturb", tmp_path_factory)
    assert tree_id(suite / "repos" / f"{EXTEND_INSTANCE}__extend-4") == tree_id(perturb / "repos" / EXTEND_INSTANCE)


def test_extend_tasks_validate_again_from_the_suite_folder(tmp_path_factory):
    suite = built_suite("extend", tmp_path_factory)
    summary = validate_suite(suite, workers=2)
    assert summary["ok"], summary["failed"]
    assert summary["passed"] == len(rows(suite / "tasks.jsonl"))


def test_perturb_tasks_validate_in_their_environment_image_as_they_do_locally(tmp_path_factory, fixture_env_image):
    suite = built_suite("perturb", tmp_path_factory)
    local = validate_suite(suite, workers=2)
    image = validate_suite(suite, workers=2, provider="image")
    assert (local["routes"], image["routes"]) == ({"current": 3}, {"env-image": 3})
    assert image["ok"], image["failed"]
    assert (image["tasks"], image["passed"]) == (local["tasks"], local["passed"]) == (3, 3)


def test_the_original_suite_builds_from_the_cli_and_validates(tmp_path):
    repo, dataset = materialize_fixture(tmp_path / "fixture")
    subprocess.run(["git", "-C", str(repo), "tag", "v0.3.0"], check=True)  # a release, as setuptools_scm reads
    out = tmp_path / "o"
    args = ["build", str(dataset), "--suite", "original", "--out", str(out), "--repo-cache", str(repo.parent)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tasks"] == 3
    tags = subprocess.run(["git", "-C", str(out / "repos" / INSTANCES[0]), "tag"], capture_output=True)
    assert tags.stdout.decode().split() == ["v0.3.0"]
    summary = validate_suite(out)
    assert (summary["ok"], summary["passed"]) == (True, 3), summary["failed"]


def test_suite_validate_cli_passes_then_fails_on_a_corrupted_ground_truth(tmp_path_factory, tmp_path):
    suite = built_suite("perturb", tmp_path_factory)
    runner = CliRunner()
    result = runner.invoke(app, ["validate", str(suite), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["passed"] == len(INSTANCES)

    broken = tmp_path / "suite"
    shutil.copytree(suite, broken, symlinks=True)
    path = broken / "ground_truth" / "fixture__ledger-1.json"
    record = json.loads(path.read_text())
    # Drop the remapped patch's last file: it still applies, but no longer fixes the issue.
    patch = record["row"]["patch"]
    record["row"]["patch"] = patch[: patch.rindex("diff --git ")]
    path.write_text(json.dumps(record))
    result = runner.invoke(app, ["validate", str(broken), "--workers", "2"])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert [f["task_id"] for f in summary["failed"]] == ["fixture__ledger-1"]
    reasons = " ".join(summary["failed"][0]["reasons"])
    assert "ground-truth file differs" in reasons
    assert "level3: after the remapped gold patch" in reasons


def test_broken_instances_are_rejected_with_their_reason_and_the_batch_goes_on(tmp_path_factory, tmp_path):
    cache, dataset = fixture_dataset(tmp_path_factory)
    by_id = load_dataset(dataset).by_id()
    good = by_id["fixture__ledger-3"]
    no_apply = {**by_id["fixture__ledger-1"], "instance_id": "no-apply", "patch": NOT_APPLYING}
    passing = {**good, "instance_id": "already-passes", "FAIL_TO_PASS": good["PASS_TO_PASS"][:1]}
    no_commit = {**good, "instance_id": "no-commit", "base_commit": "0" * 40}
    lines = [json.dumps(r) for r in (no_apply, passing, good, no_commit)] + ['{"instance_id": "half a row"}']
    (tmp_path / "data.jsonl").write_text("\n".join(lines) + "\n")
    report = build_suite(
        tmp_path / "data.jsonl", "perturb", tmp_path / "out", repo_cache=cache, workers=2, progress=False
    )
    assert (report.tasks, report.rejected) == (1, 4)
    rejected = {r["instance_id"]: r for r in rows(tmp_path / "out" / "rejected.jsonl")}
    assert rejected["no-apply"]["stage"] == "gold"
    assert rejected["already-passes"]["stage"] == "level3"
    named = f"before the gold patch: 1 FAIL_TO_PASS test(s) pass ({good['PASS_TO_PASS'][0]})"
    assert named in rejected["already-passes"]["reason"]  # which test, not only how many
    assert "log" in rejected["already-passes"]["detail"]  # the tail tells a reader why
    # The original fails the same check, so the variant is not blamed for it.
    assert rejected["already-passes"]["reason"].endswith("; the original instance fails too, the same way")
    assert rejected["no-commit"]["stage"] == "error"
    assert "Traceback" in rejected["no-commit"]["detail"]["traceback"]
    assert rejected["half a row"]["stage"] == "dataset"
    assert [t["instance_id"] for t in rows(tmp_path / "out" / "tasks.jsonl")] == ["fixture__ledger-3"]
    assert not any((tmp_path / "out" / "repos").glob("no-*"))


def test_a_finished_build_refuses_another_config_and_an_unknown_provider_fails_fast(tmp_path_factory):
    suite = built_suite("perturb", tmp_path_factory)
    cache, dataset = fixture_dataset(tmp_path_factory)
    with pytest.raises(ValueError, match="another dataset or config"):
        build_suite(dataset, "perturb", suite, repo_cache=cache, seed=1, progress=False)
    with pytest.raises(ValueError, match="unknown provider 'docker'"):
        build_suite(dataset, "perturb", suite, provider="docker", progress=False)


def test_an_extend_suite_builds_in_the_environment_image_with_the_local_builds_verdicts(
    tmp_path_factory, fixture_env_image, tmp_path
):
    """The Perturb variant's tests and imports, and every family's probes, baseline tests and self-checks, run in
    containers of the instance's environment image: the same tasks, trees and answers as the local build. The row
    names a published SWE-bench image, as real rows do: its /testbed holds the original, so it is not used."""
    local = built_suite("extend", tmp_path_factory)
    cache, _ = fixture_dataset(tmp_path_factory)
    out = tmp_path / "suite"
    row = json.loads((local.parent / "extend.jsonl").read_text())
    dataset = tmp_path / "extend.jsonl"
    dataset.write_text(json.dumps({**row, "image": "swebench/sweb.eval.x86_64.fixture_1776_ledger-2:latest"}) + "\n")
    build_suite(dataset, "extend", out, provider="image", repo_cache=cache, seed=0, workers=2, progress=False)
    assert rows(out / "rejected.jsonl") == []
    tasks = rows(out / "tasks.jsonl")
    assert [t["instance_id"] for t in tasks] == [t["instance_id"] for t in rows(local / "tasks.jsonl")]
    for task in tasks:
        assert tree_id(out / task["repoanchor_repo"]) == tree_id(local / task["repoanchor_repo"])
        built, expected = truth(out, task["instance_id"])["extend"], truth(local, task["instance_id"])["extend"]
        assert built["ground_truth"] == expected["ground_truth"]
        assert built["task"]["self_check"]["status"] == "passed", built["task"]["self_check"]
        if built["task"]["validator"]:  # multi_file is graded SWE-bench's way, by the instance's tests
            assert built["task"]["validator"]["image"] == fixture_env_image
    environments = check_manifest(out)["environments"]
    assert environments[EXTEND_INSTANCE]["route"] == "env-image"
    assert environments[EXTEND_INSTANCE]["image"] == fixture_env_image
    assert check_manifest(local)["environments"][EXTEND_INSTANCE]["route"] == "current"
    summary = validate_suite(out, workers=2, provider="image")
    assert summary["ok"], summary["failed"]
    assert summary["routes"] == {"env-image": len(tasks)}


@pytest.mark.skipif(not os.environ.get("REPOANCHOR_REPO_CACHE"), reason="set REPOANCHOR_REPO_CACHE to a repo cache")
def test_real_swebench_instance_builds_a_validated_perturb_task(tmp_path):
    """pallets__flask-5014 with a clone of pallets/flask in $REPOANCHOR_REPO_CACHE/pallets__flask (slow)."""
    from tests.support.shared import shared_path

    path = shared_path("data", "swebench", "SWE-bench_Verified_test.parquet")
    if not path.is_file():
        pytest.skip(f"no shared SWE-bench data at {path}")
    row = load_dataset(path).by_id()["pallets__flask-5014"]
    (tmp_path / "data.jsonl").write_text(json.dumps(row) + "\n")
    cache = Path(os.environ["REPOANCHOR_REPO_CACHE"])
    for kind in ("perturb", "spt"):
        out = tmp_path / kind
        report = build_suite(
            tmp_path / "data.jsonl",
            kind,
            out,
            repo_cache=cache,
            cache_dir=cache / ".venvs",
            n_variants=1,
            progress=False,
        )
        assert report.rejected == 0, (out / "rejected.jsonl").read_text()
        assert validate_suite(out, cache_dir=cache / ".venvs")["ok"]


def test_an_extend_family_without_material_is_recorded_with_its_reason(tmp_path_factory, tmp_path):
    cache, dataset = fixture_dataset(tmp_path_factory)
    row = load_dataset(dataset).by_id()["fixture__ledger-1"]  # its gold patch touches one file
    (tmp_path / "one.jsonl").write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    build_suite(
        tmp_path / "one.jsonl",
        "extend",
        out,
        repo_cache=cache,
        extend_config={"families": ["multi_file"]},
        progress=False,
    )
    assert rows(out / "tasks.jsonl") == []
    [skipped] = rows(out / "rejected.jsonl")
    assert (skipped["stage"], skipped["task_id"]) == ("extend-skipped", "fixture__ledger-1__extend-4")
    assert skipped["reason"] == "the gold patch touches 1 Python file(s), need 2"


def test_a_build_with_no_task_exits_non_zero_and_says_why(tmp_path_factory, tmp_path):
    cache, dataset = fixture_dataset(tmp_path_factory)
    rows = [json.loads(line) for line in dataset.read_text().splitlines()[:2]]
    for row in rows:
        row["base_commit"] = "0" * 40  # no such commit in the repository
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["build", str(broken), "--suite", "perturb", "--out", str(tmp_path / "s"), "--repo-cache", str(cache)]
    result = CliRunner().invoke(app, [*args, "--no-progress"])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert summary["tasks"] == 0
    assert summary["rejections"]["count"] == 2
    assert "error: the perturb suite has no task: all 2 instance(s) were rejected" in result.stderr
    assert "fixture__ledger-1 [" in result.stderr
    assert "0000000000000000000000000000000000000000" in result.stderr
