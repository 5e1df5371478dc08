"""Trajectory readers: every shared real trajectory, the OpenCode shapes from the offline reference, bad files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer
from repoanchor.scaffolds.trajectories.readers import read_many, read_trajectory
from repoanchor.scaffolds.trajectories.trajectory import (
    OUTPUT_EXCERPT_CHARS,
    TRAJECTORY_FORMAT,
    Action,
    ModelTurn,
    Trajectory,
    TrajectoryError,
    load,
    save,
)
from tests.support.shared import shared_path

SHARED = shared_path("data", "trajectories")
SHARED_FILES = sorted(SHARED.glob("*/*.traj.json")) if SHARED.is_dir() else []
FIXTURES = Path(__file__).parent / "fixtures"


def _independent_counts(raw: dict) -> tuple[int, int]:
    """(executed actions, format errors) counted from the raw file without the reader's regex.

    Text mode: a response runs iff it holds exactly one "```bash" fence. Tool mode: one action per tool call.
    """
    assistants = [message for message in raw["messages"] if message["role"] == "assistant"]
    if any(message.get("tool_calls") for message in assistants):
        return sum(len(message["tool_calls"]) for message in assistants), 0
    fences = [str(message["content"]).count("```bash\n") for message in assistants]
    return sum(1 for n in fences if n == 1), sum(1 for n in fences if n != 1)


@pytest.mark.skipif(not SHARED_FILES, reason=f"no shared trajectories found under {SHARED}")
@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_shared_trajectory_parses_with_matching_counts(path: Path):
    raw = json.loads(path.read_text())
    trajectory = read_trajectory(path)
    actions, format_errors = _independent_counts(raw)

    assert len(trajectory.actions) == actions
    assert trajectory.format_errors == format_errors
    assert trajectory.source_format == f"mini-swe-agent-{path.parent.name.rsplit('-', 1)[1]}"
    assert trajectory.exit_status == raw["info"]["exit_status"]
    assert trajectory.cost == pytest.approx(raw["info"]["model_stats"]["instance_cost"])
    assert trajectory.api_calls == raw["info"]["model_stats"]["api_calls"]
    assert trajectory.instance_id == raw["instance_id"]
    assert trajectory.model == raw["info"]["config"]["model"]["model_name"]
    assert trajectory.input_tokens > 0
    assert trajectory.output_tokens > 0
    assert [action.index for action in trajectory.actions] == list(range(actions))
    assert all(action.command for action in trajectory.actions)
    assert all(len(action.output_excerpt) < OUTPUT_EXCERPT_CHARS + 100 for action in trajectory.actions)
    assert sum(turn.n_actions for turn in trajectory.turns) == actions
    if raw["info"]["exit_status"] == "Submitted":
        assert trajectory.submission == raw["info"]["submission"]
        assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in trajectory.actions[-1].command


@pytest.mark.skipif(not SHARED_FILES, reason=f"no shared trajectories found under {SHARED}")
def test_exit_codes_come_from_the_observations():
    v2 = next(path for path in SHARED_FILES if path.parent.name == "mini-swe-agent-v2")
    raw = json.loads(v2.read_text())
    replies = {m["tool_call_id"]: m["extra"]["returncode"] for m in raw["messages"] if m["role"] == "tool"}
    trajectory = read_trajectory(v2)
    for action in trajectory.actions:
        call_id = action.tool_input.get("tool_call_id")
        assert call_id is None or action.exit_code == replies[call_id]
    assert sum(action.exit_code is not None for action in trajectory.actions) == len(replies)

    v1 = next(path for path in SHARED_FILES if path.parent.name == "mini-swe-agent-v1")
    first = read_trajectory(v1).actions[0]
    assert first.exit_code == 0
    assert "<returncode>" not in first.output_excerpt


@pytest.mark.skipif(not SHARED_FILES, reason=f"no shared trajectories found under {SHARED}")
def test_a_crashed_run_keeps_its_exit_status_and_no_submission():
    crashed = [read_trajectory(path) for path in SHARED_FILES if "reasoner" in path.name]
    assert crashed, "expected the deepseek-reasoner run that ended in InternalServerError"
    assert crashed[0].exit_status == "InternalServerError"
    assert crashed[0].submission is None


def _write_json(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("tracking", "recorded", "cost"),
    [("ignore_errors", 0.0, None), ("ignore_errors", 0.25, 0.25), ("default", 0.25, 0.25), (None, 0.0, 0.0)],
)
def test_a_run_mini_could_not_price_has_an_unknown_cost_not_a_free_one(tmp_path: Path, tracking, recorded, cost):
    """With cost_tracking ignore_errors mini records 0.0 for a call it cannot price (e.g. a local server's model);
    otherwise it refuses a zero cost. A run of calls that all cost 0.0 that way was not priced: cost unknown, as
    our own runs of an unpriced model record it."""
    model = {"model_name": "openai/local", **({"cost_tracking": tracking} if tracking else {})}
    document = {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {"model_stats": {"instance_cost": recorded, "api_calls": 1}, "config": {"model": model}},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "look", "extra": {"cost": recorded}},
        ],
    }
    assert read_trajectory(_write_json(tmp_path / "unpriced.traj.json", document)).cost == cost


def test_text_mode_skips_responses_with_zero_or_several_blocks(tmp_path: Path):
    block = "```bash\n{}\n```"
    document = {
        "info": {"exit_status": "LimitsExceeded", "model_stats": {"instance_cost": 0.5, "api_calls": 4}},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "THOUGHT: look\n\n" + block.format("ls")},
            {"role": "user", "content": "<returncode>2</returncode>\n<output>\nls: no\n</output>"},
            {"role": "assistant", "content": "I think I am done."},
            {"role": "user", "content": "Please always provide EXACTLY ONE action, found 0 actions."},
            {"role": "assistant", "content": block.format("cat a") + "\n" + block.format("cat b")},
            {"role": "user", "content": "Please always provide EXACTLY ONE action, found 2 actions."},
            {"role": "assistant", "content": "again\n```mswea_bash_command\npytest -q\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n1 passed\n</output>"},
        ],
    }
    trajectory = read_trajectory(_write_json(tmp_path / "text.traj.json", document))
    assert trajectory.source_format == "mini-swe-agent-v1"
    assert [(a.command, a.exit_code, a.turn_index) for a in trajectory.actions] == [("ls", 2, 0), ("pytest -q", 0, 3)]
    assert trajectory.actions[0].output_excerpt == "ls: no"
    assert trajectory.format_errors == 2
    assert [turn.format_error for turn in trajectory.turns] == [False, True, True, False]
    assert trajectory.exit_status == "LimitsExceeded"
    assert trajectory.submission is None


@pytest.mark.parametrize(
    ("observation", "code", "output"),
    [
        ("<returncode>2</returncode>\n<output>\nls: no\n</output>", 2, "ls: no"),
        # mini 0.x: the code on its own line, stdout and stderr apart, the container command echoed first
        (
            "<args>\n['docker', 'exec', '-w', '/testbed', 'c0ffee', 'bash', '-c', 'ls']\n</args>\n"
            "<returncode>\n2\n</returncode>\n<stdout>\n\n</stdout>\n<stderr>\nls: no\n\n</stderr>",
            2,
            "ls: no",
        ),
        ("<returncode>\n0\n</returncode>\n<stderr>\n\n</stderr>\n<stdout>\na\nb\n\n</stdout>", 0, "a\nb"),
    ],
)
def test_every_mini_observation_layout_gives_the_exit_code_and_the_output(tmp_path: Path, observation, code, output):
    document = {
        "info": {"exit_status": "Submitted"},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "look\n```bash\nls\n```"},
            {"role": "user", "content": observation},
        ],
    }
    action = read_trajectory(_write_json(tmp_path / "old.traj.json", document)).actions[0]
    assert (action.exit_code, action.output_excerpt) == (code, output)


def test_tool_mode_gives_one_action_per_parallel_call_and_counts_format_errors(tmp_path: Path):
    def call(call_id: str, command: str) -> dict:
        arguments = json.dumps({"command": command})
        return {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": arguments}}

    usage = {"prompt_tokens": 100, "completion_tokens": 10}
    document = {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {"model_stats": {"instance_cost": 0.02, "api_calls": 3}, "config": {"model": {"model_name": "m"}}},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "user", "content": "No tool calls found", "extra": {"interrupt_type": "FormatError"}},
            {
                "role": "assistant",
                "content": "two at once",
                "tool_calls": [call("c1", "ls"), call("c2", "cat x.py")],
                "extra": {"cost": 0.01, "response": {"usage": usage}},
            },
            {"role": "tool", "tool_call_id": "c1", "content": "..", "extra": {"raw_output": "x.py\n", "returncode": 0}},
            {"role": "tool", "tool_call_id": "c2", "content": "..", "extra": {"raw_output": "nope", "returncode": 1}},
            {"role": "assistant", "content": "submit", "tool_calls": [call("c3", "echo COMPLETE_TASK")]},
            {"role": "exit", "content": "diff", "extra": {"exit_status": "Submitted", "submission": "diff"}},
        ],
    }
    trajectory = read_trajectory(_write_json(tmp_path / "tools.traj.json", document))
    assert trajectory.source_format == "mini-swe-agent-v2"
    assert [(a.command, a.exit_code, a.turn_index) for a in trajectory.actions] == [
        ("ls", 0, 1),
        ("cat x.py", 1, 1),
        ("echo COMPLETE_TASK", None, 2),
    ]
    assert trajectory.format_errors == 1
    assert (trajectory.exit_status, trajectory.submission, trajectory.model) == ("Submitted", "diff", "m")
    assert (trajectory.input_tokens, trajectory.output_tokens) == (100, 10)


def test_opencode_event_stream():
    trajectory = read_trajectory(FIXTURES / "opencode-run-events.jsonl")
    assert trajectory.source_format == "opencode-events"
    assert trajectory.session_id == "ses_fixture01"
    assert [(a.tool, a.turn_index) for a in trajectory.actions] == [
        ("glob", 0),
        ("grep", 0),
        ("read", 1),
        ("edit", 1),
        ("bash", 2),
    ]
    read, bash = trajectory.actions[2], trajectory.actions[4]
    assert read.tool_error
    assert read.output_excerpt == "File not found: /repo/nope.py"
    assert (bash.command, bash.exit_code, bash.tool_error) == ("echo to-stderr >&2; exit 3", 3, False)
    assert len(trajectory.turns) == 4
    assert trajectory.exit_status == "Finished"
    assert trajectory.cost == pytest.approx(0.00208 + 0.00213 + 0.00224 + 0.00278)
    assert trajectory.input_tokens == 2000 + 2050 + 2160 + 2700
    assert trajectory.output_tokens == 40 + 50 + 40 + 40


def test_opencode_error_event_sets_exit_status():
    trajectory = read_trajectory(FIXTURES / "opencode-run-error.jsonl")
    assert trajectory.exit_status == "APIError"
    assert len(trajectory.actions) == 1


def test_opencode_stream_cut_off_before_the_end_is_incomplete(tmp_path: Path):
    lines = (FIXTURES / "opencode-run-events.jsonl").read_text().splitlines()
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(lines[:8]) + "\n")
    trajectory = read_trajectory(short)
    assert trajectory.exit_status == "Incomplete"
    assert len(trajectory.actions) == 4


def test_opencode_session_export():
    trajectory = read_trajectory(FIXTURES / "opencode-export.json")
    assert trajectory.source_format == "opencode-export"
    assert (trajectory.session_id, trajectory.model) == ("ses_fixture03", "fake/fake-model")
    assert trajectory.exit_status == "Finished"
    assert [a.tool for a in trajectory.actions] == ["read", "edit", "bash"]
    assert trajectory.actions[2].exit_code == 0
    assert trajectory.cost == pytest.approx(0.0035)
    assert [turn.n_actions for turn in trajectory.turns] == [2, 1, 0]


def test_truncated_document_raises_naming_the_file(tmp_path: Path):
    text = (FIXTURES / "opencode-export.json").read_text()
    cut = tmp_path / "cut-opencode-export.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(TrajectoryError, match="truncated") as caught:
        read_trajectory(cut)
    assert str(cut) in str(caught.value)


def _stream_lines() -> list[str]:
    return (FIXTURES / "opencode-run-events.jsonl").read_text().splitlines()


def test_a_stream_cut_mid_line_keeps_every_event_before_it_and_says_so(tmp_path: Path):
    """A run that crashed while OpenCode wrote a line: the steps it took are kept, the cut line is noted."""
    lines = _stream_lines()
    whole = read_trajectory(FIXTURES / "opencode-run-events.jsonl")
    last_action = max(i for i, line in enumerate(lines) if '"tool_use"' in line)
    cut = tmp_path / "cut.events.jsonl"
    cut.write_text("\n".join(lines[:last_action] + [lines[last_action][:40]]) + "\n")
    trajectory = read_trajectory(cut)
    assert [a.command for a in trajectory.actions] == [a.command for a in whole.actions][:-1]
    (note,) = trajectory.notes
    assert note.startswith(f"line {last_action + 1}, the last, is cut off (")
    assert note.endswith("), left out")
    assert whole.notes == []


@pytest.mark.parametrize("at", [0, 3])
def test_plain_text_lines_in_a_stream_are_left_out_with_a_note(tmp_path: Path, at: int):
    """OpenCode prints some warnings (a rejected permission, a provider error) to stdout among its events."""
    lines = _stream_lines()
    warned = tmp_path / "warned.events.jsonl"
    warned.write_text("\n".join(lines[:at] + ["ProviderModelNotFoundError: ProviderModelNotFoundError"] + lines[at:]))
    trajectory = read_trajectory(warned)
    whole = read_trajectory(FIXTURES / "opencode-run-events.jsonl")
    assert trajectory.actions == whole.actions
    assert trajectory.notes == [
        f"line {at + 1} is not a JSON event, left out: ProviderModelNotFoundError: ProviderModelNotFoundError"
    ]


def test_a_broken_line_inside_a_stream_raises_naming_the_line(tmp_path: Path):
    lines = _stream_lines()
    broken = tmp_path / "broken.events.jsonl"
    broken.write_text("\n".join(lines[:3] + [lines[3][:30]] + lines[4:]))
    with pytest.raises(TrajectoryError, match="line 4 is not valid JSON"):
        read_trajectory(broken)


def test_a_pretty_printed_document_cut_short_is_not_read_as_a_stream(tmp_path: Path):
    cut = tmp_path / "pretty.traj.json"
    cut.write_text('{\n  "messages": [\n    {"type": "message", "role": "user"}\n')
    with pytest.raises(TrajectoryError, match="truncated"):
        read_trajectory(cut)


def test_non_json_and_unknown_json_raise_naming_the_file(tmp_path: Path):
    text_file = tmp_path / "notes.traj.json"
    text_file.write_text("this is not json\n")
    with pytest.raises(TrajectoryError, match="not valid JSON") as caught:
        read_trajectory(text_file)
    assert str(text_file) in str(caught.value)

    other = _write_json(tmp_path / "resolved.json", {"django__django-1": True})
    with pytest.raises(TrajectoryError, match="unrecognised trajectory"):
        read_trajectory(other)
    with pytest.raises(TrajectoryError, match="empty file"):
        read_trajectory(_write_text(tmp_path / "empty.json", ""))


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_read_many_continues_past_bad_files(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    missing = tmp_path / "missing.json"
    paths = [FIXTURES / "opencode-export.json", bad, missing, FIXTURES / "opencode-run-events.jsonl"]
    result = read_many(paths)
    assert [t.source_format for t in result.trajectories] == ["opencode-export", "opencode-events"]
    assert [error.path for error in result.errors] == [str(bad), str(missing)]


def test_long_output_is_bounded_and_marked(tmp_path: Path):
    long_output = "x" * (OUTPUT_EXCERPT_CHARS * 3)
    event = {"type": "tool_use", "part": {"tool": "bash", "state": {"status": "completed", "output": long_output}}}
    trajectory = read_trajectory(_write_json(tmp_path / "one.json", [event]))
    action = trajectory.actions[0]
    assert action.output_truncated
    assert len(action.output_excerpt) < OUTPUT_EXCERPT_CHARS + 100
    assert "characters elided" in action.output_excerpt


def test_save_load_round_trip_and_version_check(tmp_path: Path):
    trajectory = read_trajectory(FIXTURES / "opencode-run-events.jsonl")
    saved = save(trajectory, tmp_path / "out" / "run.json")
    assert load(saved) == trajectory
    assert json.loads(saved.read_text())["format"] == TRAJECTORY_FORMAT

    future = json.loads(saved.read_text()) | {"format": "repoanchor.trajectory/99"}
    _write_json(saved, future)
    with pytest.raises(TrajectoryError, match="expected format"):
        load(saved)


@pytest.mark.parametrize("model", [Trajectory, Action, ModelTurn])
def test_every_schema_field_is_documented(model):
    undocumented = [name for name, field in model.model_fields.items() if not field.description]
    assert undocumented == []


def _bash_call(number: int, command: str) -> dict:
    arguments = json.dumps({"command": command})
    return {"id": f"call_{number}", "type": "function", "function": {"name": "bash", "arguments": arguments}}


def test_a_responses_api_run_of_the_real_mini_cli_reads_like_a_tool_call_run(tmp_path: Path):
    """mini's Responses API models store the response object and `function_call_output` items, with no `role`."""
    replies = [
        Reply("look", tool_calls=[_bash_call(1, "ls"), _bash_call(2, "cat missing.txt")]),
        Reply("no call: mini answers with a format error"),
        Reply("done", tool_calls=[_bash_call(3, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")]),
    ]
    offline = {"MSWEA_SILENT_STARTUP": "1", "MSWEA_CONFIGURED": "1", "MSWEA_COST_TRACKING": "ignore_errors",
               "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # fmt: skip
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "present.txt").write_text("x\n")
    out = tmp_path / "run.traj.json"
    with ScriptedServer(replies) as server:
        command = [
            str(Path(sys.executable).with_name("mini")), "-m", "openai/scripted", "--model-class", "litellm_response",
            "-t", "fix it", "-y", "--exit-immediately", "--environment-class", "local", "-c", "mini.yaml",
            "-c", f"environment.cwd={tmp_path / 'work'}", "-c", f"model.model_kwargs.api_base={server.base_url}",
            "-c", "model.model_kwargs.api_key=dummy", "-o", str(out),
        ]  # fmt: skip
        subprocess.run(command, env={**os.environ, **offline}, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=300, check=True)  # fmt: skip
        assert {request.path for request in server.requests} == {"/v1/responses"}
    raw = json.loads(out.read_text())
    assert any("role" not in message for message in raw["messages"])  # the shape this reader must rewrite

    trajectory = read_trajectory(out)
    assert trajectory.source_format == "mini-swe-agent-v2"
    assert [action.command for action in trajectory.actions] == [
        "ls", "cat missing.txt", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    ]  # fmt: skip
    assert [action.exit_code for action in trajectory.actions][:2] == [0, 1]
    assert trajectory.actions[0].output_excerpt.strip() == "present.txt"
    assert "No such file" in trajectory.actions[1].output_excerpt
    assert [action.turn_index for action in trajectory.actions] == [0, 0, 2]
    assert trajectory.format_errors == 1
    assert trajectory.turns[1].format_error
    assert (trajectory.input_tokens, trajectory.output_tokens) == (20, 10)  # two priced answers of 10 + 5
    assert trajectory.exit_status == raw["info"]["exit_status"] == "Submitted"
    assert trajectory.api_calls == raw["info"]["model_stats"]["api_calls"] == 3


@pytest.mark.skipif(not SHARED_FILES, reason=f"no shared trajectories found under {SHARED}")
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_bare_message_list_reads_as_its_messages(tmp_path: Path, version: str):
    """mini's `agent.messages` dumped on its own (no `info`): the same actions as the full trajectory."""
    path = next(path for path in SHARED_FILES if path.parent.name == f"mini-swe-agent-{version}")
    bare = tmp_path / "messages.json"
    bare.write_text(json.dumps(json.loads(path.read_text())["messages"]))
    full, messages_only = read_trajectory(path), read_trajectory(bare)
    assert messages_only.source_format == full.source_format
    assert [a.command for a in messages_only.actions] == [a.command for a in full.actions]
    assert [a.exit_code for a in messages_only.actions] == [a.exit_code for a in full.actions]
    assert messages_only.format_errors == full.format_errors
    assert messages_only.instance_id is None
    assert messages_only.model is None


def test_an_opencode_run_whose_files_cannot_be_read_has_an_empty_trajectory_that_says_why(tmp_path: Path):
    from repoanchor.scaffolds.opencode.adapter import EVENTS_FILE, _trajectory

    lines = _stream_lines()
    (tmp_path / EVENTS_FILE).write_text("\n".join(lines[:2] + ["{broken"] + lines[2:]))
    trajectory = _trajectory(tmp_path)
    assert trajectory.actions == []
    assert trajectory.notes == [f"not read: {tmp_path / EVENTS_FILE}: line 3 is not valid JSON (truncated stream?): "
                                "Expecting property name enclosed in double quotes"]  # fmt: skip


def test_files_of_harnesses_read_by_import_point_there(tmp_path: Path):
    traj = _write_json(tmp_path / "o__p-1.traj", {"trajectory": [{"action": "ls"}], "info": {}})
    with pytest.raises(TrajectoryError, match=r"a SWE-agent trajectory \(.traj\): `repoanchor import` its run folder"):
        read_trajectory(traj)
    output = _write_text(tmp_path / "output.jsonl", '{"instance_id": "o__p-1", "history": []}\n' * 2)
    with pytest.raises(TrajectoryError, match="line 1: a run of an OpenHands output.jsonl: `repoanchor import`"):
        read_trajectory(output)


def test_a_line_that_is_json_but_no_event_is_named_by_its_own_line_after_a_left_out_one(tmp_path: Path):
    lines = _stream_lines()
    stream = _write_text(tmp_path / "s.events.jsonl", "\n".join(["a warning", *lines[:2], '{"no": "type"}']))
    with pytest.raises(TrajectoryError, match="line 4: not an OpenCode event"):
        read_trajectory(stream)
