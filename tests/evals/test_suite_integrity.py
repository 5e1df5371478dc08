"""A task repository holds every file of its source, `.gitignore` or not: the ledger fixture tracks
`tests/data/.env` although its .gitignore lists `.env` (as flask does), and its tests read it. Every suite
kind's task commit must keep it; the integrity check refuses a commit that lost a tracked file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_suite import built_suite, fixture_dataset

from repoanchor.evals.demo.fixture_project import TRACKED_IGNORED
from repoanchor.evals.harness.suite_format import read_suite_tasks
from repoanchor.evals.suites.check import validate_suite
from repoanchor.evals.suites.original import build_original_suite
from repoanchor.perturb.source.files import copy_source_tree, source_files
from repoanchor.perturb.variant_git import IntegrityError, check_commit, init_single_commit, tracked_files


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> tuple[Path, str]:
    cache, _ = fixture_dataset(tmp_path_factory)
    repo = cache / "ledger"
    return repo, _git(repo, "rev-parse", "HEAD").strip()


def test_the_fixture_tracks_a_file_its_gitignore_matches(source):
    repo, commit = source
    for rel in TRACKED_IGNORED:
        assert rel in tracked_files(repo, commit)
        assert _git(repo, "check-ignore", "--no-index", rel).strip() == rel


@pytest.mark.parametrize("kind", ["original", "perturb", "spt", "extend"])
def test_every_suite_kind_keeps_every_tracked_file(kind, source, tmp_path_factory, monkeypatch):
    repo, commit = source
    if kind == "original":  # given a relative folder, as `--out suite` gives it (git runs in the source)
        cache, dataset = fixture_dataset(tmp_path_factory)
        monkeypatch.chdir(tmp_path_factory.mktemp("original"))
        build_original_suite(dataset, Path("suite"), repo_cache=cache)
        suite = Path("suite").resolve()
        assert not _git(repo, "status", "--porcelain", "-uall")  # nothing written into the user's clone
    else:
        suite = built_suite(kind, tmp_path_factory)
    tasks = read_suite_tasks(suite)
    assert tasks, f"the {kind} suite built no task"
    expected = tracked_files(repo, commit)
    for task in tasks:
        committed = tracked_files(suite / task.repoanchor_repo, "HEAD")
        assert expected <= committed, (task.instance_id, sorted(expected - committed))
        assert not _git(suite / task.repoanchor_repo, "status", "--porcelain", "--ignored", "-uall")


def test_the_integrity_check_refuses_a_commit_that_lost_a_tracked_file(source, tmp_path):
    repo, _ = source
    tree = tmp_path / "tree"
    copied = copy_source_tree(repo, tree)
    assert copied == source_files(repo)
    assert set(TRACKED_IGNORED) <= copied
    lost = next(iter(TRACKED_IGNORED))
    (tree / lost).unlink()
    with pytest.raises(IntegrityError, match=f"lost 1 file.*{lost}"):
        init_single_commit(tree, expect=copied)


def test_the_integrity_check_refuses_files_on_disk_left_out_of_the_commit(source, tmp_path):
    repo, _ = source
    tree = tmp_path / "tree"
    copy_source_tree(repo, tree)
    init_single_commit(tree, expect=source_files(repo))
    (tree / "ledger" / "added_later.py").write_text("X = 1\n")
    with pytest.raises(IntegrityError, match="not in the commit: ledger/added_later.py"):
        check_commit(tree, ())


def test_tracked_files_named_like_caches_are_copied_and_committed(tmp_path):
    """NEVER_COPY drops caches, bytecode and virtualenvs, but not the ones a project tracks."""
    src = tmp_path / "src"
    files = {"pkg/__init__.py": "", "tests/data/old.pyc": "", "tests/venv/marker.txt": "", ".tox/keep.ini": ""}
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    (src / "untracked.pyc").write_text("")
    (src / "pkg" / "__pycache__").mkdir()
    (src / "pkg" / "__pycache__" / "x.pyc").write_text("")
    _git(src.parent, "init", "-q", str(src))
    _git(src, "add", "--force", *files)
    copied = copy_source_tree(src, tmp_path / "out")
    assert copied == set(files)
    assert not (tmp_path / "out" / "untracked.pyc").exists()
    assert not (tmp_path / "out" / "pkg" / "__pycache__").exists()
    init_single_commit(tmp_path / "out", expect=copied)
    assert tracked_files(tmp_path / "out", "HEAD") == set(files)


def test_a_variant_with_no_rewritten_site_is_rejected_saying_why(tmp_path):
    """Every pass skipped: the 'variant' would be a copy of the original carrying the perturbed label."""
    from repoanchor.evals.suites.pair import perturb_variant
    from repoanchor.evals.suites.remap import Rejected
    from repoanchor.perturb.tree import ApplyConfig

    for name in ("original", "with-gold"):
        (tmp_path / name / "pkg").mkdir(parents=True)
        (tmp_path / name / "pkg" / "__init__.py").write_text("")
        (tmp_path / name / "pkg" / "m.py").write_text("VALUE = 1\n")  # no if/else to swap
    config = ApplyConfig(["if-else-swap"], fraction=1.0)
    with pytest.raises(Rejected) as rejected:
        perturb_variant(
            tmp_path / "original", tmp_path / "with-gold", config, tmp_path / "v", tmp_path / "v-gold", background=True
        )
    assert rejected.value.stage == "perturb"
    assert rejected.value.reason == "no site was rewritten: if-else-swap: empty (1), no candidate sites (1)"


def test_an_empty_dataset_or_suite_is_no_success_and_a_missing_suite_is_named(tmp_path):
    from typer.testing import CliRunner

    from repoanchor.evals.cli.main import app as root
    from repoanchor.evals.cli.suite import app

    (tmp_path / "empty.jsonl").write_text("")
    built = CliRunner().invoke(root, ["suite", "build", str(tmp_path / "empty.jsonl"), "--out", str(tmp_path / "s")])
    assert built.exit_code == 2
    assert "no usable row: the source is empty" in built.output
    assert not (tmp_path / "s").exists()  # refused before a suite of no task was written
    (tmp_path / "s").mkdir()  # such a suite, as an older build left it
    (tmp_path / "s" / "manifest.json").write_text('{"suite": "perturb", "hashes": {}}')
    (tmp_path / "s" / "tasks.jsonl").write_text("")
    checked = CliRunner().invoke(app, ["validate", str(tmp_path / "s")])
    assert checked.exit_code == 1
    assert '"ok": false' in checked.stdout
    assert "holds no task: nothing was validated" in checked.output
    (tmp_path / "nothing").mkdir()
    missing = CliRunner().invoke(app, ["validate", str(tmp_path / "nothing")])
    assert missing.exit_code == 2
    assert "not a built suite folder (no manifest.json)" in missing.output
    assert "Traceback" not in missing.output


def test_an_original_suite_is_validated_against_its_manifests_hashes(source, tmp_path_factory, tmp_path):
    cache, dataset = fixture_dataset(tmp_path_factory)
    one = tmp_path / "one.jsonl"
    one.write_text(dataset.read_text().splitlines()[0] + "\n")
    suite = tmp_path / "suite"
    build_original_suite(one, suite, repo_cache=cache)
    summary = validate_suite(suite)
    assert (summary["kind"], summary["passed"], summary["ok"]) == ("original", 1, True)
    truth = next((suite / "ground_truth").iterdir())
    truth.write_text(truth.read_text() + "\n")  # one byte more
    summary = validate_suite(suite)
    assert not summary["ok"]
    assert "ground-truth file differs from the manifest's hash" in summary["failed"][0]["reasons"]
