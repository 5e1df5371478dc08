"""Must-show 2 of issue 16: mini-swe-agent's own batch runner (`mini-extra swebench`, its real CLI, litellm
against the scripted server) runs the suite as `repoanchor export suite` writes it, and our matrix runs the
same policy on the same task; `repoanchor import` of the batch folder gives the same per-unit table as our
run: status, exit status, steps, files read, exploration before the first edit, and the same patch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.analysis.results.units import load_units
from repoanchor.evals.cli.main import app
from repoanchor.evals.runs.attempt import run_attempt
from repoanchor.evals.runs.matrix import MatrixConfig
from repoanchor.evals.runs.run_matrix import run_matrix
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from tests.support.bug_repo import FIX_SED
from tests.support.matrix_suite import by_turn, make_suite, write_config

# The batch runner's submission is the output after the marker line: the policy prints its own diff.
POLICY = ["cat calc.py", FIX_SED, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"]
MEASURES = ["instance_id", "status", "exit_status", "steps", "files_read", "explore_before_first_edit", "graded"]
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
    """The suite as a SWE-bench dataset (`repoanchor export suite`), after giving its task the grading row the
    suite builders write in its ground truth."""
    row = json.loads((suite / "tasks.jsonl").read_text().splitlines()[0])
    fields = {key: row[key] for key in ("instance_id", "problem_statement", "base_commit")}
    grading = {**fields, "repo": "demo/calc", "version": "1.0", "patch": "", "test_patch": "", "FAIL_TO_PASS": "[]",
               "PASS_TO_PASS": "[]", "environment_setup_commit": row["base_commit"]}  # fmt: skip
    (suite / "ground_truth").mkdir()
    (suite / "ground_truth" / f"{row['instance_id']}.json").write_text(json.dumps({"row": grading}))
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


@pytest.mark.skipif(not MINI_EXTRA.exists(), reason="mini-swe-agent's mini-extra is not installed")
def test_the_real_batch_runner_imports_into_the_same_table_as_our_own_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OFFLINE["OPENAI_API_KEY"])  # inherited by the pool's worker
    suite = make_suite(tmp_path, count=1)
    with ScriptedServer(responder=by_turn(lambda _: POLICY)) as server:
        batch = start_batch(suite, tmp_path, server.base_url)  # both start at once: most of their time is imports
        config = MatrixConfig.load(
            write_config(tmp_path / "matrix.yaml", server.base_url, conditions=[{"name": "plain"}], repeats=1)
        )
        run_matrix(config, executor=InProcess(), progress=False)
        _, errors = batch.communicate(timeout=120)
    assert batch.returncode == 0, errors[-2000:]
    result = CliRunner().invoke(
        app,
        [
            "import",
            str(tmp_path / "batch"),
            "--out",
            str(tmp_path / "imported"),
            "--suite",
            str(suite),
            "--model",
            "scripted",
        ],
    )
    assert result.exit_code == 0, result.output
    ours = load_units([config.out]).units
    imported = load_units([tmp_path / "imported"]).units
    assert list(imported["unit_id"]) == list(ours["unit_id"])  # the same unit, named the same way
    assert imported[MEASURES].to_dict("records") == ours[MEASURES].to_dict("records")
    assert imported.loc[0, "steps"] == len(POLICY)
    assert imported.loc[0, "files_read"] == 1  # `cat calc.py`, labelled by the same step parser
    patches = [
        next(out.glob("units/*/attempt-1/patch.diff")).read_text() for out in (config.out, tmp_path / "imported")
    ]
    assert patches[0] == patches[1]
    assert "+    return a + b" in patches[0]
