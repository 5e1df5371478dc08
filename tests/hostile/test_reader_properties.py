"""Property tests: on any input, each reader answers with its own named error or a result, never a crash."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.harness.patch_guard import file_diffs, guard, unsafe_paths
from repoanchor.evals.harness.suite_format import read_suite_tasks
from repoanchor.evals.harness.tasks import TaskError
from repoanchor.evals.runs.matrix import MatrixConfig, MatrixConfigError
from repoanchor.scaffolds.steps.shell import ShellParseError, split_commands
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from repoanchor.scaffolds.trajectories.trajectory import TrajectoryError

# Derandomized: the same examples every run, so CI does not depend on the draw (a bad case found once, e.g. an
# instance_id that is a dict, goes into the corpus).
QUICK = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20,
)
ROW_KEYS = ["instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch", "FAIL_TO_PASS", "x"]
ROWS = st.dictionaries(st.sampled_from(ROW_KEYS), JSON, max_size=8)
TRAJECTORY_KEYS = ["messages", "info", "trajectory_format", "instance_id", "role", "content", "type", "parts"]
DOCUMENTS = st.recursive(
    st.none() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(TRAJECTORY_KEYS), inner, max_size=5),
    max_leaves=25,
)


def refusal(call, kind: type[Exception]) -> str | None:
    """The message of the `kind` error `call` raised, None when it returned (any other error fails the test)."""
    try:
        call()
    except kind as error:
        return str(error)
    return None


@contextmanager
def written(data: bytes, name: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="repoanchor-prop-") as folder:
        (Path(folder) / name).write_bytes(data)
        yield Path(folder) / name


@QUICK
@given(st.lists(st.binary(max_size=60) | ROWS.map(lambda row: json.dumps(row).encode()), max_size=6))
def test_a_jsonl_dataset_of_anything_loads_what_it_can_and_names_the_rest(lines):
    with written(b"\n".join(lines), "data.jsonl") as path:
        loaded = load_dataset(path)
    for error in loaded.errors:
        assert str(error).startswith(("line ", "row "))
    assert len({row["instance_id"] for row in loaded.rows}) == len(loaded.rows)


@QUICK
@given(st.binary(max_size=300) | DOCUMENTS.map(lambda doc: json.dumps(doc).encode()))
def test_a_trajectory_of_anything_is_read_or_named(data):
    with written(data, "x.traj.json") as path:
        message = refusal(lambda: read_trajectory(path), TrajectoryError)
    assert message is None or str(path) in message


@QUICK
@given(st.text(max_size=400))
def test_the_patch_guards_take_any_text(text):
    assert "".join(section for _, section in file_diffs(text)) == text  # sections cover the text exactly
    kept = guard(text)
    assert set(kept.patch.splitlines()) <= set(text.splitlines())
    assert all(isinstance(problem, str) for problem in unsafe_paths(text))


@QUICK
@given(st.text(max_size=200))
def test_the_shell_splitter_takes_any_command(command):
    refusal(lambda: split_commands(command), ShellParseError)


@QUICK
@given(st.binary(max_size=200) | JSON.map(lambda value: json.dumps(value).encode()))
def test_a_matrix_config_of_anything_is_loaded_or_refused_by_name(data):
    with written(data, "matrix.yaml") as path:
        message = refusal(lambda: MatrixConfig.load(path), MatrixConfigError)
    assert message is None or str(path) in message


@QUICK
@given(st.lists(st.binary(max_size=60) | JSON.map(lambda value: json.dumps(value).encode()), max_size=4))
def test_a_suite_table_of_anything_is_read_or_refused_by_line(lines):
    with written(b"\n".join(lines), "tasks.jsonl") as path:
        message = refusal(lambda: read_suite_tasks(path.parent), TaskError)
    assert message is None or str(path) in message
