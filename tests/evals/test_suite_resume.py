"""A killed suite build resumes where it stopped and ends byte-identical to an unbroken build: task rows,
rejections, manifest (timing aside), every repository's tree and commit, every ground-truth file."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from test_suite import built_suite, fixture_dataset

from repoanchor.evals.harness.failpoints import ENV as FAILPOINT_ENV
from repoanchor.evals.suites.build import build_suite
from repoanchor.evals.suites.export import TIMING_FIELDS, tree_id

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


KILLS = [
    # (failpoint, instance results on disk once it fired): every step of run_instance's publish order,
    # spread over the three instances so one chain of resumed runs costs about one build.
    ("suite.variant-staged@fixture__ledger-1", 0),  # mid-instance: one variant staged, one to go
    ("suite.result-written@fixture__ledger-1", 1),  # done, but its moving note and work folder remain
    ("suite.built@fixture__ledger-2", 1),  # every variant staged, nothing moved yet
    ("suite.moved-one@fixture__ledger-2", 1),  # half moved into repos/ and ground_truth/
    ("suite.note-removed@fixture__ledger-2", 2),  # done, its work folder remains
    ("suite.moved-one@fixture__ledger-3#2", 2),  # one repo and one ground truth moved
]


def copy_of_built_suite(tmp_path_factory, tmp_path) -> tuple[Path, Path]:
    """(the session's unbroken perturb suite, a copy of it to damage and resume)."""
    unbroken = built_suite("perturb", tmp_path_factory)
    out = tmp_path / "suite"
    shutil.copytree(unbroken, out, symlinks=True)
    return unbroken, out


def resume(out: Path, tmp_path_factory):
    """The build of `out` finished in this process, with the settings of the unbroken one."""
    cache, dataset = fixture_dataset(tmp_path_factory)
    return build_suite(dataset, "perturb", out, repo_cache=cache, seed=0, n_variants=2, workers=1, progress=False)


def test_a_build_killed_at_every_step_resumes_and_ends_byte_identical(tmp_path_factory, tmp_path):
    """Each run of the command line is SIGKILLed (its whole process group) at a named failpoint, the
    next one resumes; no timing is involved, so machine load cannot change what is tested."""
    unbroken = built_suite("perturb", tmp_path_factory)  # 2 workers, in this process
    cache, dataset = fixture_dataset(tmp_path_factory)
    out = tmp_path / "suite"
    # The command line, with the same settings as the in-process build (its defaults must agree).
    cli = [sys.executable, "-c", "from repoanchor.evals.cli.suite import app; app()", "build", str(dataset)]
    cli += ["--suite", "perturb", "--out", str(out), "--repo-cache", str(cache), "--seed", "0", "--variants", "2"]
    results = out / ".build" / "results"
    for point, finished in KILLS:
        env = {**os.environ, FAILPOINT_ENV: point}
        proc = subprocess.run([*cli, "--no-progress"], env=env, start_new_session=True, capture_output=True)
        assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr.decode()[-2000:])
        assert len(list(results.glob("*.json"))) == finished, point
        assert not (out / "tasks.jsonl").exists()

    report = resume(out, tmp_path_factory)
    assert report.skipped_done == 2
    assert_same_suite(unbroken, out)


def test_a_resume_removes_what_a_killed_run_left_of_finished_instances(tmp_path_factory, tmp_path):
    """A finished instance's work folder and moving note, and half-written temporary files anywhere."""
    unbroken, out = copy_of_built_suite(tmp_path_factory, tmp_path)
    name = "fixture__ledger-1"
    (out / ".build" / "work" / name / "original").mkdir(parents=True)
    (out / ".build" / "moving" / f"{name}.json").write_text(json.dumps([f"repos/{name}"]))
    leftovers = [out / ".tasks.jsonl.tmp", out / ".build" / "results" / f".{name}.json.tmp"]
    leftovers.append(out / "ground_truth" / f".{name}.json.tmp")
    for path in leftovers:
        path.write_text("half")
    report = resume(out, tmp_path_factory)
    assert report.skipped_done == 3
    assert not any(path.exists() for path in leftovers)
    assert_same_suite(unbroken, out)


def test_an_instance_interrupted_while_publishing_is_redone(tmp_path_factory, tmp_path):
    """Killed after moving part of an instance into the suite but before its result file: redone cleanly."""
    unbroken, out = copy_of_built_suite(tmp_path_factory, tmp_path)
    name = "fixture__ledger-2"
    (out / ".build" / "results" / f"{name}.json").unlink()
    (out / "tasks.jsonl").unlink()
    (out / "repos" / name / "half-moved.txt").write_text("left over by a killed run\n")
    (out / ".build" / "moving" / f"{name}.json").write_text(json.dumps([f"repos/{name}", f"ground_truth/{name}.json"]))
    (out / ".build" / "work" / name / "original").mkdir(parents=True)
    report = resume(out, tmp_path_factory)
    assert report.skipped_done == 2
    assert not (out / "repos" / name / "half-moved.txt").exists()
    assert_same_suite(unbroken, out)


def test_an_instance_whose_result_file_was_removed_is_rebuilt_over_its_published_tasks(tmp_path_factory, tmp_path):
    """Removing a finished instance's result file redoes it: its published repositories are replaced."""
    unbroken, out = copy_of_built_suite(tmp_path_factory, tmp_path)
    name = "fixture__ledger-3"
    (out / ".build" / "results" / f"{name}.json").unlink()
    (out / "repos" / name / "stale.txt").write_text("from an earlier build\n")
    report = resume(out, tmp_path_factory)
    assert (report.skipped_done, report.tasks) == (2, 3)
    assert not (out / "repos" / name / "stale.txt").exists()
    assert_same_suite(unbroken, out)
