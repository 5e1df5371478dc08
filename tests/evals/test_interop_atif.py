"""`repoanchor export atif`: every normalised trajectory as a valid ATIF document.

Validated twice: against the `atif` package's pydantic models (ATIF v1.8, a registry package; Harbor's own
models ship in `harbor`, which needs Python >= 3.12, so they are used only where installed) and against the
RFC's rules checked here by hand (required fields, step ids from 1, agent-only fields, call references).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.evals.interop.atif import to_atif
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from repoanchor.scaffolds.trajectories.trajectory import Trajectory
from tests.support.foreign_runs import openhands_row, write_swe_agent_run

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trajectories"
SHARED_FILES = sorted(SHARED.glob("*/*.traj.json"))
AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
STEP_FIELDS = {"step_id", "timestamp", "source", "message", "tool_calls", "observation", "metrics", "extra",
               *AGENT_ONLY, "is_copied_context"}  # fmt: skip


def check_rfc_rules(document: dict) -> None:
    """The ATIF rules a reader relies on, as RFC 0001 states them (independent of any package)."""
    assert set(document) <= {"schema_version", "session_id", "agent", "steps", "notes", "final_metrics", "extra"}
    assert document["schema_version"].startswith("ATIF-v1.")
    assert isinstance(document["session_id"], str)
    assert isinstance(document["agent"]["name"], str)
    assert isinstance(document["agent"]["version"], str)
    assert [step["step_id"] for step in document["steps"]] == list(range(1, len(document["steps"]) + 1))
    for step in document["steps"]:
        assert set(step) <= STEP_FIELDS
        assert step["source"] in ("system", "user", "agent")
        assert isinstance(step["message"], str)
        if step["source"] != "agent":
            assert not set(step) & set(AGENT_ONLY)
        calls = {call["tool_call_id"] for call in step.get("tool_calls", [])}
        assert all(isinstance(call["arguments"], dict) for call in step.get("tool_calls", []))
        assert {r["source_call_id"] for r in step.get("observation", {}).get("results", [])} <= calls
    assert document["final_metrics"]["total_steps"] == len(document["steps"])


def validate_with_packages(document: dict) -> int:
    """Validate with every ATIF model installed; how many did."""
    atif = pytest.importorskip("atif")
    atif.Trajectory.model_validate(document)
    try:
        from harbor.models.trajectories import Trajectory as HarborTrajectory
    except ImportError:
        return 1
    HarborTrajectory.model_validate(document)
    return 2


@pytest.mark.skipif(not SHARED_FILES, reason=f"no shared trajectories under {SHARED}")
def test_every_shared_trajectory_exports_to_valid_atif(tmp_path):
    result = CliRunner().invoke(app, ["export", "atif", str(SHARED), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    written = sorted(tmp_path.glob("*.atif.json"))
    assert json.loads(result.stdout)["written"] == len(written) == len(SHARED_FILES) == 21
    for path in written:
        document = json.loads(path.read_text())
        check_rfc_rules(document)
        validate_with_packages(document)
        source = read_trajectory(document["extra"]["source_path"])
        calls = [call for step in document["steps"] for call in step.get("tool_calls", [])]
        assert [call["arguments"] for call in calls] == [action.tool_input for action in source.actions]
        assert len(document["steps"]) == len(source.turns)
        assert document["agent"]["model_name"] == source.model
        costs = [step.get("metrics", {}).get("cost_usd") for step in document["steps"]]
        assert sum(c for c in costs if c is not None) == pytest.approx(sum(t.cost or 0 for t in source.turns))


@pytest.mark.parametrize("source_format", ["mini-swe-agent-v2", "opencode-events", "swe-agent", "openhands"])
def test_a_run_without_model_turns_is_still_a_valid_document(source_format):
    document = to_atif(Trajectory(source_format=source_format, exit_status="InternalServerError"), "s-1")
    check_rfc_rules(document)
    validate_with_packages(document)
    assert document["steps"] == [{"step_id": 1, "source": "system", "message": "The run made no model call."}]
    assert document["extra"]["exit_status"] == "InternalServerError"


def test_an_unreadable_file_is_named_and_the_others_written(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "cut.traj.json").write_text('{"messages": [')
    if SHARED_FILES:
        (runs / SHARED_FILES[0].name).write_bytes(SHARED_FILES[0].read_bytes())
    result = CliRunner().invoke(app, ["export", "atif", str(runs), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "cut.traj.json: truncated JSON" in result.stderr
    assert json.loads(result.stdout)["written"] == (1 if SHARED_FILES else 0)


def test_imported_swe_agent_and_openhands_runs_export_to_valid_atif(tmp_path):
    write_swe_agent_run(tmp_path / "swe", ["o__p-1"])
    (tmp_path / "output.jsonl").write_text(json.dumps(openhands_row("o__p-2")) + "\n")
    for source, out in ((tmp_path / "swe", "a"), (tmp_path / "output.jsonl", "b")):
        imported = CliRunner().invoke(app, ["import", str(source), "--out", str(tmp_path / out)])
        assert imported.exit_code == 0, imported.output
    result = CliRunner().invoke(
        app, ["export", "atif", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "atif")]
    )
    assert result.exit_code == 0, result.output
    documents = {p.name: json.loads(p.read_text()) for p in (tmp_path / "atif").glob("*.atif.json")}
    assert len(documents) == 2
    for document in documents.values():
        check_rfc_rules(document)
        validate_with_packages(document)
    agents = sorted(document["agent"]["name"] for document in documents.values())
    assert agents == ["openhands", "swe-agent"]
    calls = {
        d["agent"]["name"]: [c["function_name"] for s in d["steps"] for c in s.get("tool_calls", [])]
        for d in documents.values()
    }
    assert calls == {"swe-agent": ["grep", "read", "edit", "bash", "read", "bash"],
                     "openhands": ["bash", "read", "read", "edit", "bash"]}  # fmt: skip


@pytest.mark.skipif(not SHARED_FILES, reason=f"no shared trajectories under {SHARED}")
def test_the_prompts_our_adapters_record_open_the_steps(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "trajectory.json").write_bytes(SHARED_FILES[-1].read_bytes())  # a raw file, read by its format
    (run / "run.json").write_text(json.dumps({"prompt": "Fix add().", "system_prompt": "You are an agent.", "x": 1}))
    result = CliRunner().invoke(app, ["export", "atif", str(run), "--out", str(tmp_path / "atif")])
    assert result.exit_code == 0, result.output
    (document,) = [json.loads(p.read_text()) for p in (tmp_path / "atif").glob("*.atif.json")]
    check_rfc_rules(document)
    validate_with_packages(document)
    opening = [(step["source"], step["message"]) for step in document["steps"][:3]]
    assert opening[:2] == [("system", "You are an agent."), ("user", "Fix add().")]
    assert opening[2][0] == "agent"
    assert len(document["steps"]) == len(read_trajectory(SHARED_FILES[-1]).turns) + 2
