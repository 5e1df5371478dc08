"""Must-show 2 of issue 16: mini-swe-agent's own batch runner (`mini-extra swebench`, its real CLI, litellm
against the scripted server) runs the suite as `repoanchor export suite` writes it, with the bug's real grading
row (FAIL_TO_PASS, PASS_TO_PASS, its pytest command), and our matrix runs the same policy on the same task;
`repoanchor import` of the batch folder, `repoanchor grade` (local) and `repoanchor results` give the same
tables as our run: the same outcome counts (1 graded, 1 resolved), the same per-unit row but for the folder
it came from (status, exit status, steps, files read, exploration, grade, cost), every other table byte for
byte, and the same patch."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.evals.runs.attempt import run_attempt
from repoanchor.evals.runs.matrix import MatrixConfig
from repoanchor.evals.runs.run_matrix import run_matrix
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from tests.support.bug_repo import FAIL_TO_PASS, FIX_SED, PASS_TO_PASS, write_ground_truth
from tests.support.matrix_suite import by_turn, make_suite, write_config

# The batch runner's submission is the output after the marker line: the policy prints its own diff.
POLICY = ["cat calc.py", FIX_SED, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"]
OFFLINE = {
    "MSWEA_SILENT_STARTUP": "1", "MSWEA_CONFIGURED": "1", "MSWEA_COST_TRACKING": "ignore_errors",
    "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "sk-test-batch-0123456789",
}  # fmt: skip
MINI_EXTRA = Path(sys.executable).with_name("mini-extra")


class InProcess:
    """An executor running each attempt here: for one unit, a pool's worker start-up is most of the time."""

    slots = 1

    def __init__(self) -> None:
        self.outcomes: dict[int, dict] = {}

    def submit(self, unit, folder: Path) -> int:
        self.outcomes[len(self.outcomes)] = run_attempt(unit, str(folder))
        return len(self.outcomes) - 1

    def wait(self, handles) -> list[tuple[int, dict]]:
        return [(handle, self.outcomes[handle]) for handle in handles]

    def close(self) -> None:
        pass


def export_suite(suite: Path, root: Path) -> Path:
    """The suite as a SWE-bench dataset (`repoanchor export suite`), after giving its task its grading row in
    the suite's ground truth, as the suite builders do: the bug's FAIL_TO_PASS and PASS_TO_PASS, its pytest
    command and log parser."""
    row = json.loads((suite / "tasks.jsonl").read_text().splitlines()[0])
    write_ground_truth(suite, row["instance_id"], suite / row["repoanchor_repo"])
    result = CliRunner().invoke(app, ["export", "suite", str(suite), "--out", str(root / "data")])
    assert result.exit_code == 0, result.output
    return root / "data" / suite.name


def start_batch(suite: Path, root: Path, api_base: str) -> subprocess.Popen:
    """`mini-extra swebench` on the exported suite, in a clone of the task's repository (local environment)."""
    dataset = export_suite(suite, root)
    row = json.loads((suite / "tasks.jsonl").read_text().splitlines()[0])
    subprocess.run(["git", "clone", "-q", str(suite / row["repoanchor_repo"]), str(root / "work")], check=True)
    command = [
        str(MINI_EXTRA), "swebench", "--subset", str(dataset), "--split", "test", "-m", "openai/scripted",
        "--environment-class", "local", "-c", "swebench.yaml", "-c", f"environment.cwd={root / 'work'}",
        "-c", f"model.model_kwargs.api_base={api_base}", "-c", "model.model_kwargs.api_key=dummy",
        "-o", str(root / "batch"),
    ]  # fmt: skip
    return subprocess.Popen(command, env={**os.environ, **OFFLINE}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def graded_tables(runner: CliRunner, matrix: Path, out: Path, tables: Path) -> dict[str, str]:
    """`repoanchor grade MATRIX --provider local`, then `repoanchor results OUT --out TABLES`: the CSV tables,
    by file name, after checking the one unit's grade: the bug's tests ran, and pass."""
    graded = runner.invoke(app, ["grade", str(matrix), "--provider", "local"])
    assert graded.exit_code == 0, graded.output
    assert json.loads(graded.stdout) == {"suite/mini-swe-agent/plain": {"resolved": 1, "graded": 1, "ungraded": 0}}
    grade = json.loads(next(out.glob("units/*/grade.json")).read_text())
    assert grade["f2p"] == {"success": FAIL_TO_PASS, "failure": []}
    assert grade["p2p"] == {"success": PASS_TO_PASS, "failure": []}
    written = runner.invoke(app, ["results", str(out), "--out", str(tables)])
    assert written.exit_code == 0, written.output
    return {path.name: path.read_text() for path in tables.glob("*.csv")}


@pytest.mark.skipif(not MINI_EXTRA.exists(), reason="mini-swe-agent's mini-extra is not installed")
def test_the_real_batch_runner_imports_into_the_same_tables_as_our_own_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OFFLINE["OPENAI_API_KEY"])  # inherited by the pool's worker
    suite = make_suite(tmp_path, count=1)
    runner = CliRunner()
    with ScriptedServer(responder=by_turn(lambda _: POLICY)) as server:
        batch = start_batch(suite, tmp_path, server.base_url)  # both start at once: most of their time is imports
        config = MatrixConfig.load(
            write_config(tmp_path / "matrix.yaml", server.base_url, conditions=[{"name": "plain"}], repeats=1)
        )
        run_matrix(config, executor=InProcess(), progress=False)
        tables = {"ours": graded_tables(runner, tmp_path / "matrix.yaml", Path(config.out), tmp_path / "results-ours")}
        _, errors = batch.communicate(timeout=120)
    assert batch.returncode == 0, errors[-2000:]
    imported = tmp_path / "imported"
    result = runner.invoke(
        app, ["import", str(tmp_path / "batch"), "--out", str(imported), "--suite", str(suite), "--model", "scripted"]
    )
    assert result.exit_code == 0, result.output
    tables["theirs"] = graded_tables(runner, imported / "matrix.yaml", imported, tmp_path / "results-theirs")
    ours, theirs = tables["ours"], tables["theirs"]
    assert sorted(theirs) == sorted(ours)
    assert {"outcomes.csv", "units.csv"} <= set(ours)
    # units.csv names each unit by its matrix folder (`unit_key`, `matrix`): the one column pair that must differ.
    units = {
        name: pd.read_csv(io.StringIO(text))
        for name, text in (("ours", ours.pop("units.csv")), ("theirs", theirs.pop("units.csv")))
    }
    assert (units["ours"]["matrix"][0], units["theirs"]["matrix"][0]) == ("out", "imported")
    where = ["unit_key", "matrix"]
    pd.testing.assert_frame_equal(units["theirs"].drop(columns=where), units["ours"].drop(columns=where))
    assert theirs == ours  # every other table, byte for byte: outcomes, effort, drift, frontier...
    outcomes = pd.read_csv(io.StringIO(ours["outcomes.csv"]))
    assert outcomes[["units", "graded", "resolved", "rate"]].to_dict("records") == [
        {"units": 1, "graded": 1, "resolved": 1, "rate": 1.0}
    ]
    unit = units["theirs"].iloc[0]
    assert (unit["status"], bool(unit["resolved"]), unit["steps"], unit["files_read"]) == ("done", True, len(POLICY), 1)
    assert pd.isna(unit["cost"])  # an unpriced model: unknown, in mini's trajectory (0.0 there) as in ours
    patches = [next(out.glob("units/*/attempt-1/patch.diff")).read_text() for out in (Path(config.out), imported)]
    assert patches[0] == patches[1]
    assert "+    return a + b" in patches[0]
