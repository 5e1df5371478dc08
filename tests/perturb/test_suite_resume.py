"""A killed suite build resumes where it stopped and ends byte-identical to an unbroken build: task rows,
rejections, manifest (timing aside), every repository's tree and commit, every ground-truth file."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from test_suite import built_suite, fixture_dataset

from repoanchor.perturb.suite_build import build_suite
from repoanchor.perturb.suite_export import TIMING_FIELDS, tree_id

TABLES = ("tasks.jsonl", "tasks.parquet", "rejected.jsonl")


def _head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()


def assert_same_suite(expected: Path, actual: Path) -> None:
    for name in TABLES:
        assert (actual / name).read_bytes() == (expected / name).read_bytes(), name
    manifests = [json.loads((s / "manifest.json").read_text()) for s in (expected, actual)]
    for manifest in manifests:
        for field in TIMING_FIELDS:
            manifest.pop(field)
    assert manifests[0] == manifests[1]
    truths = sorted(p.name for p in (expected / "ground_truth").iterdir())
    assert truths == sorted(p.name for p in (actual / "ground_truth").iterdir())
    for name in truths:
        assert (actual / "ground_truth" / name).read_bytes() == (expected / "ground_truth" / name).read_bytes(), name
    repos = sorted(p.name for p in (expected / "repos").iterdir())
    assert repos == sorted(p.name for p in (actual / "repos").iterdir())
    for name in repos:
        assert tree_id(actual / "repos" / name) == tree_id(expected / "repos" / name), name
        assert _head(actual / "repos" / name) == _head(expected / "repos" / name), name
    assert not any((actual / ".build" / "work").iterdir())
    assert not any((actual / ".build" / "moving").iterdir())


def test_a_killed_build_resumes_and_ends_byte_identical(tmp_path_factory, tmp_path):
    unbroken = built_suite("perturb", tmp_path_factory)  # 2 workers, in this process
    cache, dataset = fixture_dataset(tmp_path_factory)
    out = tmp_path / "suite"
    # The command line, with the same settings as the in-process build (its defaults must agree).
    cli = [sys.executable, "-c", "from repoanchor.perturb.suite_cli import app; app()", "build", str(dataset)]
    cli += ["--suite", "perturb", "--out", str(out), "--repo-cache", str(cache), "--seed", "0", "--variants", "2"]
    proc = subprocess.Popen([*cli, "--no-progress"], start_new_session=True, stderr=subprocess.DEVNULL)
    results = out / ".build" / "results"
    deadline = time.monotonic() + 120
    while not (results.is_dir() and any(results.glob("*.json"))):
        assert proc.poll() is None, "the build ended before it could be killed"
        assert time.monotonic() < deadline, "no instance finished within 120 s"
        time.sleep(0.02)
    time.sleep(random.Random(7).uniform(0.3, 1.0))  # seeded: lands inside the second instance's build
    os.killpg(proc.pid, signal.SIGKILL)  # the whole process group, as a terminal's kill would
    proc.wait()
    finished = len(list(results.glob("*.json")))
    assert 1 <= finished < 3, "the kill did not land mid-build"
    assert not (out / "tasks.jsonl").exists()

    report = build_suite(dataset, "perturb", out, repo_cache=cache, seed=0, n_variants=2, workers=1, progress=False)
    assert report.skipped_done == finished
    assert_same_suite(unbroken, out)


def test_an_instance_interrupted_while_publishing_is_redone(tmp_path_factory, tmp_path):
    """Killed after moving part of an instance into the suite but before its result file: redone cleanly."""
    unbroken = built_suite("perturb", tmp_path_factory)
    cache, dataset = fixture_dataset(tmp_path_factory)
    out = tmp_path / "suite"
    shutil.copytree(unbroken, out, symlinks=True)
    name = "fixture__ledger-2"
    (out / ".build" / "results" / f"{name}.json").unlink()
    (out / "tasks.jsonl").unlink()
    (out / "repos" / name / "half-moved.txt").write_text("left over by a killed run\n")
    (out / ".build" / "moving" / f"{name}.json").write_text(json.dumps([f"repos/{name}", f"ground_truth/{name}.json"]))
    (out / ".build" / "work" / name / "original").mkdir(parents=True)
    report = build_suite(dataset, "perturb", out, repo_cache=cache, seed=0, n_variants=2, workers=1, progress=False)
    assert report.skipped_done == 2
    assert not (out / "repos" / name / "half-moved.txt").exists()
    assert_same_suite(unbroken, out)
