"""Step tables, transition matrices, drift measures and the report: known answers by hand, then the real set."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from repoanchor.evals.analysis.analyze import analyze
from repoanchor.evals.analysis.drift import drift_table, roles_from_metadata
from repoanchor.evals.analysis.report import forest_png
from repoanchor.evals.analysis.steps_frame import files_touched, load_steps
from repoanchor.evals.analysis.transitions import delta_table, transition_table
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from repoanchor.scaffolds.trajectories.trajectory import Action, save
from tests.support.shared import shared_path

N_BOOT = 200
TRAJECTORIES = shared_path("data", "trajectories")
# Phases explore, explore, edit, test, edit: reads pkg/a.py and pkg/b.py (grep's folder operand is not a file).
KNOWN = [
    "cat pkg/a.py",
    "grep -n foo pkg/b.py pkg/",
    "sed -i 's/x/y/' pkg/a.py",
    "python -m pytest tests",
    "echo x > pkg/c.py",
]


def write_v1(path: Path, commands: list[str], instance_id: str = "demo__pkg-1") -> Path:
    """A mini-swe-agent 1.x trajectory: one ```bash block per assistant message, then its observation."""
    messages = [{"role": "system", "content": "system"}, {"role": "user", "content": "task"}]
    for command in commands:
        messages.append({"role": "assistant", "content": f"THOUGHT\n```bash\n{command}\n```"})
        messages.append({"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"})
    document = {
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": instance_id,
        "info": {"exit_status": "Submitted", "submission": "", "model_stats": {"instance_cost": 0.5, "api_calls": 5}},
        "messages": messages,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture
def known(tmp_path: Path):
    return load_steps([write_v1(tmp_path / "cond" / "demo.traj.json", KNOWN)])


def test_known_run_has_expected_transitions(known) -> None:
    assert known.errors == []
    assert list(known.steps["phase"]) == ["explore", "explore", "edit", "test", "edit"]
    table = transition_table(known.steps, n_boot=N_BOOT).set_index(["from", "to"])
    expected = {("explore", "explore"): (1, 0.5), ("explore", "edit"): (1, 0.5), ("edit", "test"): (1, 1.0),
                ("test", "edit"): (1, 1.0), ("explore", "test"): (0, 0.0), ("edit", "edit"): (0, 0.0)}  # fmt: skip
    for key, (count, p) in expected.items():
        assert table.loc[key, "count"] == count
        assert table.loc[key, "p"] == pytest.approx(p)
    assert table.loc[("explore", "explore"), "n"] == 2
    assert table["count"].sum() == 4  # five steps in one run: four consecutive pairs


def test_other_steps_are_dropped_unless_kept(tmp_path: Path) -> None:
    steps = load_steps(
        [write_v1(tmp_path / "c" / "x.traj.json", ["ls", "pip install foo", "sed -i s/a/b/ f.py"])]
    ).steps
    dropped = transition_table(steps, n_boot=N_BOOT).set_index(["from", "to"])
    assert dropped.loc[("explore", "edit"), "count"] == 1
    kept = transition_table(steps, phases=("explore", "edit", "test", "other"), n_boot=N_BOOT).set_index(["from", "to"])
    assert kept.loc[("explore", "other"), "count"] == 1
    assert kept.loc[("other", "edit"), "count"] == 1
    assert kept.loc[("explore", "edit"), "count"] == 0


def test_known_run_drift_and_files(known) -> None:
    drift = drift_table(known.steps, known.runs).iloc[0]
    assert drift["steps"] == 5
    assert drift["steps_before_first_edit"] == 2
    assert drift["explore_explore_rate"] == pytest.approx(0.5)
    assert drift["distinct_files_read"] == 2
    assert pd.isna(drift["decoy_visits"])  # no role mapping: unknown, not zero
    assert pd.isna(drift["proxy_visits"])
    assert drift["cost"] == pytest.approx(0.5)
    with_roles = drift_table(known.steps, known.runs, {"pkg/b.py": "decoy", "pkg/c.py": "proxy"}).iloc[0]
    assert with_roles["decoy_visits"] == 1  # the grep that read pkg/b.py
    assert with_roles["proxy_visits"] == 1  # the redirect that wrote pkg/c.py
    no_hits = drift_table(known.steps, known.runs, {"pkg/zzz.py": "decoy"}).iloc[0]
    assert no_hits["decoy_visits"] == 0
    assert no_hits["proxy_visits"] == 0


def test_the_runs_instance_names_its_projects_cli(tmp_path: Path) -> None:
    commands = ["cat q.sql", "datasette serve q.db"]
    own = load_steps([write_v1(tmp_path / "a" / "x.traj.json", commands, instance_id="simonw__datasette-1")])
    other = load_steps([write_v1(tmp_path / "b" / "x.traj.json", commands, instance_id="demo__pkg-1")])
    assert list(own.steps["phase"]) == ["explore", "test"]
    assert list(other.steps["phase"]) == ["explore", "other"]


def test_files_touched_from_commands_and_tool_inputs() -> None:
    def touched(command: str | None = None, tool: str = "bash", **tool_input):
        action = Action(index=0, tool=tool, command=command, tool_input=tool_input, turn_index=0)
        return files_touched(action)

    assert touched("cd /testbed && sed -n '1,20p' ./pkg/a.py") == (("pkg/a.py",), ())
    assert touched("nl -ba pkg/a.py | sed -n '3,9p'") == (("pkg/a.py",), ())
    assert touched("head -n 40 /testbed/pkg/a.py && tail -5 pkg/b.py") == (("pkg/a.py", "pkg/b.py"), ())
    assert touched("grep -rn 'def f' pkg/ --include=*.py") == ((), ())
    assert touched("grep -e x -e y pkg/a.py setup.cfg") == (("pkg/a.py", "setup.cfg"), ())
    assert touched("cat > repro.py <<'EOF'\nprint(1)\nEOF") == ((), ("repro.py",))
    assert touched("sed -i 's/a/b/' pkg/a.py 2>/dev/null") == ((), ("pkg/a.py",))
    assert touched("python fix.py | tee out.log") == ((), ("out.log",))
    assert touched("cat pkg/*.py") == ((), ())  # globs are not expanded, so no file is claimed
    assert touched(tool="read", filePath="/w/pkg/a.py") == (("/w/pkg/a.py",), ())
    assert touched(tool="edit", filePath="pkg/a.py", oldString="x", newString="y") == ((), ("pkg/a.py",))
    patch = "*** Begin Patch\n*** Update File: pkg/a.py\n@@\n-x\n+y\n*** Add File: pkg/n.py\n+z\n*** End Patch"
    assert touched(tool="apply_patch", patchText=patch) == ((), ("pkg/a.py", "pkg/n.py"))
    assert touched(tool="grep", pattern="x", path="pkg") == ((), ())


def test_roles_from_variant_metadata() -> None:
    metadata = {
        "path_resolution_map": [
            {"kind": "decoy", "visible_path": "pkg/mod/alt.py", "runtime_path": "never imported"},
            {"kind": "import_proxy", "visible_path": "pkg/a.py", "runtime_path": "pkg/p2.py",
             "chain": "pkg/p1.py -> pkg/p2.py"},
            {"kind": "wrapper_module", "visible_path": "pkg/mod.py", "runtime_path": "pkg/_impl.py"},
        ]
    }  # fmt: skip
    assert roles_from_metadata(metadata) == {
        "pkg/mod/alt.py": "decoy", "pkg/p1.py": "proxy", "pkg/p2.py": "proxy",
        "pkg/mod.py": "wrapper", "pkg/_impl.py": "hidden",
    }  # fmt: skip


def test_delta_is_paired_when_conditions_share_instances(tmp_path: Path) -> None:
    for instance in ("i-1", "i-2", "i-3"):
        write_v1(tmp_path / "base" / f"{instance}.traj.json", ["ls", "cat a.py", "sed -i s/x/y/ a.py"], instance)
        write_v1(tmp_path / "hint" / f"{instance}.traj.json", ["ls", "sed -i s/x/y/ a.py", "pytest"], instance)
    steps = load_steps([tmp_path]).steps
    delta = delta_table(steps, "base", "hint", n_boot=N_BOOT).set_index(["from", "to"])
    assert set(delta["pairing"]) == {"paired"}
    assert delta.loc[("explore", "explore"), "delta"] == pytest.approx(-0.5)
    assert delta.loc[("explore", "edit"), "delta"] == pytest.approx(0.5)
    # Every instance moves the same way, so every paired resample gives the same Δp.
    assert delta.loc[("explore", "edit"), "low"] == pytest.approx(0.5)
    assert delta.loc[("explore", "edit"), "high"] == pytest.approx(0.5)


def test_malformed_file_is_reported_and_others_analysed(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    write_v1(folder / "good-1.traj.json", KNOWN, "g-1")
    write_v1(folder / "good-2.traj.json", KNOWN[:3], "g-2")
    (folder / "bad.traj.json").write_text('{"messages": [{"role": "system", "content": "x"', encoding="utf-8")
    summary = analyze([folder], tmp_path / "out", n_boot=N_BOOT)
    assert summary["runs"] == 2
    assert len(summary["errors"]) == 1
    assert "bad.traj.json" in summary["errors"][0]
    steps = pd.read_csv(tmp_path / "out" / "steps.csv")
    assert sorted(steps["instance_id"].unique()) == ["g-1", "g-2"]
    assert "bad.traj.json" in (tmp_path / "out" / "report.md").read_text()
    assert not (tmp_path / "out" / "delta_p.csv").exists()  # one condition only


def test_conditions_mapping_and_run_folders(tmp_path: Path) -> None:
    raw = write_v1(tmp_path / "runs" / "r1" / "mini.traj.json", KNOWN, "i-1")
    save(read_trajectory(raw), raw.parent / "trajectory.json")  # what the adapters write beside the raw file
    write_v1(tmp_path / "other" / "i-2.traj.json", KNOWN[:2], "i-2")
    frame = load_steps([tmp_path / "runs", tmp_path / "other"], {tmp_path / "runs": "anchor"})
    assert frame.errors == []
    assert list(frame.runs["run"]) == [str(raw.parent / "trajectory.json"), str(tmp_path / "other" / "i-2.traj.json")]
    assert list(frame.runs["condition"]) == ["anchor", "other"]  # mapped folder, else the parent folder's name
    assert list(frame.runs["instance_id"]) == ["i-1", "i-2"]


def test_forest_plot_and_empty_input(tmp_path: Path) -> None:
    write_v1(tmp_path / "a" / "x.traj.json", KNOWN, "x")
    forest = pd.DataFrame({"comparison": ["perturbed vs original"], "estimate": [-0.1], "low": [-0.2], "high": [0.0]})
    figure = ("forest.png", "Degradation", forest_png(forest, title="Degradation"))
    summary = analyze([tmp_path / "a"], tmp_path / "out", n_boot=N_BOOT, figures=[figure])
    assert "forest.png" in summary["files"]
    assert (
        base64.b64encode((tmp_path / "out" / "forest.png").read_bytes()).decode()
        in (tmp_path / "out" / "report.html").read_text()
    )
    (tmp_path / "empty").mkdir()
    nothing = analyze([tmp_path / "empty"], tmp_path / "none", n_boot=N_BOOT)
    assert nothing["runs"] == 0
    assert "no trajectory file" in nothing["errors"][0]
    assert (tmp_path / "none" / "report.html").exists()


@pytest.fixture(scope="module")
def shared_runs(tmp_path_factory) -> tuple[Path, dict]:
    if not TRAJECTORIES.is_dir():
        pytest.skip(f"shared trajectories not found at {TRAJECTORIES} (set REPOANCHOR_SHARED)")
    out = tmp_path_factory.mktemp("analysis")
    return out, analyze([TRAJECTORIES], out, seed=7, n_boot=N_BOOT)


def test_shared_set_writes_every_output(shared_runs) -> None:
    out, summary = shared_runs
    assert summary["errors"] == []
    assert summary["conditions"] == ["mini-swe-agent-v1", "mini-swe-agent-v2"]
    for name in ("steps.csv", "transitions.csv", "delta_p.csv", "drift.csv", "report.md", "report.html"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "transitions_mini-swe-agent-v1.png").exists()
    assert (out / "effort.png").exists()


def test_shared_transitions_are_distributions_with_sane_cis(shared_runs) -> None:
    transitions = pd.read_csv(shared_runs[0] / "transitions.csv")
    assert set(transitions["condition"]) == {"mini-swe-agent-v1", "mini-swe-agent-v2"}
    live = transitions[transitions["n"] > 0]
    sums = live.groupby(["condition", "from"])["p"].sum()
    assert np.allclose(sums, 1.0), sums
    assert (live["low"] <= live["p"] + 1e-9).all()
    assert (live["p"] <= live["high"] + 1e-9).all()


def test_shared_step_counts_match_trajectories(shared_runs) -> None:
    steps = pd.read_csv(shared_runs[0] / "steps.csv")
    files = sorted(TRAJECTORIES.rglob("*.traj.json"))
    counts = steps.groupby("run").size()
    for path in files:
        assert counts.get(str(path), 0) == len(read_trajectory(path).actions), path
    assert set(counts.index) == {str(path) for path in files}


def test_shared_delta_rows_for_the_pair(shared_runs) -> None:
    delta = pd.read_csv(shared_runs[0] / "delta_p.csv")
    pair = delta[(delta["condition_a"] == "mini-swe-agent-v1") & (delta["condition_b"] == "mini-swe-agent-v2")]
    assert len(pair) == 9
    assert set(pair["pairing"]) == {"unpaired"}  # the two sets share no instance
    assert np.allclose(pair["delta"], pair["p_b"] - pair["p_a"])


def test_same_seed_gives_identical_files_and_a_self_contained_page(shared_runs, tmp_path: Path) -> None:
    out, _ = shared_runs
    again = tmp_path / "again"
    analyze([TRAJECTORIES], again, seed=7, n_boot=N_BOOT)
    for name in ("steps.csv", "transitions.csv", "delta_p.csv", "drift.csv", "report.md", "report.html"):
        assert (out / name).read_bytes() == (again / name).read_bytes(), name
    page = (out / "report.html").read_text()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page, re.IGNORECASE)
    pngs = sorted(out.glob("*.png"))
    assert len(pngs) == 4  # two heatmaps, one Δp heatmap, the effort plot
    for png in pngs:
        assert base64.b64encode(png.read_bytes()).decode() in page, png.name


def matrix_units(root: Path, count: int = 4) -> Path:
    """`root`/units: `count` two-stage units whose first attempt was lost (an infrastructure error) and retried;
    each final attempt's stage 1 explores twice (explore→explore), its stage 2 reads then edits (explore→edit)."""
    for number in range(1, count + 1):
        unit = root / "units" / f"u{number}"
        record = {
            "unit_id": f"u{number}", "status": "done", "condition": "anchor", "instance_id": f"x-{number}",
            "attempts": [{"dir": "attempt-1", "infra_error": "worker_lost"}, {"dir": "attempt-2", "infra_error": None}],
        }  # fmt: skip
        unit.mkdir(parents=True)
        (unit / "result.json").write_text(json.dumps(record), encoding="utf-8")
        write_v1(unit / "attempt-1" / "stage1-1" / "mini.traj.json", ["cat a.py", "cat b.py", "cat c.py"], "")
        write_v1(unit / "attempt-2" / "stage1-1" / "mini.traj.json", ["cat a.py", "cat b.py"], "")
        write_v1(unit / "attempt-2" / "stage2" / "mini.traj.json", ["cat a.py", "sed -i 's/x/y/' a.py"], "")
        (unit / "attempt-2" / "anchored.json").write_text("{}", encoding="utf-8")
    return root


def test_a_matrix_folder_reads_as_its_units_and_resamples_them_whole(tmp_path: Path) -> None:
    frame = load_steps([matrix_units(tmp_path / "matrix")])
    assert frame.errors == []
    assert len(frame.superseded) == 4
    assert all("attempt-1" in path for path in frame.superseded)
    assert analyze([tmp_path / "matrix"], tmp_path / "out", n_boot=N_BOOT)["superseded_attempts"] == 4
    assert set(frame.runs["condition"]) == {"anchor"}  # the unit's condition, not the folder name "stage2"
    assert sorted(frame.runs["instance_id"].unique()) == ["x-1", "x-2", "x-3", "x-4"]
    assert frame.runs["unit"].nunique() == 4
    assert len(frame.runs) == 8
    row = transition_table(frame.steps, n_boot=N_BOOT).set_index(["from", "to"]).loc[("explore", "edit")]
    assert (row["runs"], row["units"], row["p"]) == (8, 4, 0.5)
    # Every unit has one explore→explore (stage 1) and one explore→edit (stage 2): resampled whole, p is 0.5 in
    # every replicate. Resampling the stages apart, as if independent, would give a spread.
    assert row["low"] == row["high"] == 0.5
    apart = transition_table(frame.steps.drop(columns="unit"), n_boot=N_BOOT).set_index(["from", "to"])
    assert apart.loc[("explore", "edit"), "low"] < 0.5 < apart.loc[("explore", "edit"), "high"]
