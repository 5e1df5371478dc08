"""Property tests of the foreign-run readers: on any JSON a harness file could hold, a reader answers with runs
and named problems, never a crash, and whatever it returns can be written as our layout."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repoanchor.evals.interop.imports.layout import write_layout
from repoanchor.evals.interop.imports.openhands import read_openhands
from repoanchor.evals.interop.imports.swe_agent import read_swe_agent

# Derandomized like the project's other property tests: CI sees the same examples every run.
QUICK = settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
KEYS = [
    "instance_id", "trajectory", "info", "action", "observation", "submission", "exit_status", "model_stats",
    "instance_cost", "replay_config", "history", "source", "args", "command", "path", "cause", "id", "extras",
    "metadata", "exit_code", "metrics", "accumulated_cost", "test_result", "git_patch", "error", "llm_config",
]  # fmt: skip
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=6),
    max_leaves=30,
)
ACTION = st.sampled_from(["run", "read", "edit", "finish", "message", 3, None])


def write_layout_of(batch) -> None:
    with tempfile.TemporaryDirectory() as out:
        if batch.runs:
            write_layout(batch, Path(out) / "out", suites=[], model=None, condition="plain")


@QUICK
@given(document=JSON, instance=st.sampled_from(["o__p-1", "x"]))
def test_any_traj_document_reads_without_a_crash(document, instance):
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / f"{instance}.traj").write_text(json.dumps(document))
        batch = read_swe_agent(Path(folder))
        write_layout_of(batch)  # while the source's files are there to be copied
    assert len(batch.runs) + len(batch.problems) == 1


@QUICK
@given(rows=st.lists(JSON | st.fixed_dictionaries({"instance_id": st.text(min_size=1, max_size=8), "history": JSON,
                                                   "action": ACTION}), max_size=3))  # fmt: skip
def test_any_openhands_line_reads_without_a_crash(rows):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "output.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        batch = read_openhands(path)
        write_layout_of(batch)
    assert len(batch.runs) + len(batch.problems) == len(rows)
