"""The hostile-input corpus (`corpus/`, expectations in `corpus/expected.yaml`): malformed dataset rows, matrix
configs, trajectories, patches and suite folders. Each case is answered with an error naming its file (and line
or field) while the rest of its batch goes on; nothing crashes, nothing is written where it should not be."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from repoanchor.evals.analysis.steps_frame import load_steps
from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.harness.grading import apply_patch
from repoanchor.evals.harness.suite_format import as_task, read_suite_tasks
from repoanchor.evals.harness.tasks import TaskError
from repoanchor.evals.runs.matrix import MatrixConfig, MatrixConfigError

CORPUS = Path(__file__).with_name("corpus")
EXPECTED = yaml.safe_load((CORPUS / "expected.yaml").read_text())


def cases(kind: str) -> list[tuple[str, str]]:
    return sorted(EXPECTED[kind].items())


def test_every_corpus_file_has_an_expectation_and_every_expectation_a_file():
    on_disk = {
        "datasets": {p.name for p in (CORPUS / "datasets").iterdir()},
        "matrix": {p.name for p in (CORPUS / "matrix").iterdir()},
        "trajectories": {p.name for p in (CORPUS / "trajectories").iterdir()} - {"readable.traj.json"},
        "patches": {p.name for p in (CORPUS / "patches").iterdir()},
        "suites": {p.name for p in (CORPUS / "suites").iterdir()},
    }
    assert on_disk == {kind: set(EXPECTED[kind]) for kind in on_disk}
    assert sum(len(names) for names in on_disk.values()) == 53


@pytest.mark.parametrize(("name", "says"), cases("datasets"))
def test_a_bad_dataset_row_is_named_by_its_line_and_the_good_row_loads(name, says):
    loaded = load_dataset(CORPUS / "datasets" / name)
    assert [row["instance_id"] for row in loaded.rows] == ["owner__name-1"]
    (error,) = loaded.errors
    assert str(error).startswith("line 2"), str(error)
    assert says in error.message


@pytest.mark.parametrize(("name", "says"), cases("matrix"))
def test_a_bad_matrix_config_is_refused_naming_the_file_and_field(name, says, tmp_path):
    config = tmp_path / name
    shutil.copy(CORPUS / "matrix" / name, config)
    before = set(tmp_path.iterdir())
    with pytest.raises(MatrixConfigError) as refused:
        MatrixConfig.load(config)
    assert str(config) in str(refused.value)
    assert says in str(refused.value)
    assert set(tmp_path.iterdir()) == before  # nothing written


def test_unreadable_trajectories_are_named_and_the_readable_one_is_analysed():
    frame = load_steps([CORPUS / "trajectories"])
    errors = {Path(error.path).name: str(error) for error in frame.errors}
    assert set(errors) == set(EXPECTED["trajectories"])
    for name, says in cases("trajectories"):
        assert says in errors[name], errors[name]
        assert name in errors[name]  # the message starts with the file's path
    assert list(frame.runs["instance_id"]) == ["owner__name-1"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "sandbox" / "repo"
    repo.mkdir(parents=True)
    run = {"cwd": repo, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)
    (repo / "f.txt").write_text("a\n")
    subprocess.run(["git", "add", "."], **run)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"], **run)
    return repo


@pytest.mark.parametrize(("name", "says"), cases("patches"))
def test_a_hostile_patch_is_refused_and_writes_nothing_anywhere(name, says, repo):
    sandbox = repo.parent
    hooks = sorted(p.name for p in (repo / ".git" / "hooks").iterdir())
    applied, log = apply_patch(repo, (CORPUS / "patches" / name).read_text())
    assert not applied
    assert says in log, log
    assert sorted(p.name for p in sandbox.iterdir()) == ["repo"]  # nothing beside the repository
    assert not Path("/tmp/repoanchor-hostile-absolute.txt").exists()
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == hooks
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    assert status == "", status  # not even GNU patch's .orig and .rej files
    assert not (repo / "link").is_symlink()


@pytest.mark.parametrize(("name", "says"), cases("suites"))
def test_a_bad_suite_row_is_named_by_its_file_and_line(name, says):
    suite = CORPUS / "suites" / name
    with pytest.raises(TaskError) as refused:
        [as_task(suite, row) for row in read_suite_tasks(suite)]
    assert f"{suite / 'tasks.jsonl'}" in str(refused.value)
    assert says in str(refused.value)
