"""The run matrix end to end: real mini-swe-agent runs in real worker processes against the scripted
server's oracle (same answers for every run of a unit), on a tiny suite of bug-repository tasks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from repoanchor.evals.cli.eval_matrix import eval_command
from repoanchor.evals.runs.executors import LocalPool, make_executor
from repoanchor.evals.runs.fingerprint import StaleResults
from repoanchor.evals.runs.matrix import MatrixConfig, MatrixConfigError, expand, unit_ids
from repoanchor.evals.runs.run_matrix import run_matrix
from repoanchor.scaffolds.models.pricing import UnpricedModel
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from tests.support.bug_repo import ISSUE, make_bug_repo
from tests.support.matrix_suite import (
    comparable,
    make_suite,
    oracle,
    remove_orphaned_scratch,
    result_files,
    worker_killer,
    write_config,
)

# One xdist group: these tests share one worker pool and the baseline run the Ray test compares against.
pytestmark = pytest.mark.xdist_group("ray")
PLAIN_CALLS, ANCHOR_CALLS = 2, 4  # model requests per unit: fix + submit; stage 1 (2) + stage 2 (2)


@pytest.fixture(scope="module", autouse=True)
def api_key():
    # Set before the pool spawns its workers, which inherit it; litellm wants a key even for a local server.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-matrix-0123456789")
        yield


@pytest.fixture(scope="module")
def server():
    with ScriptedServer(responder=oracle) as running:
        yield running


@pytest.fixture(scope="module")
def pool():
    # One pool for the module: each worker imports litellm and mini-swe-agent once (seconds), not per test.
    with LocalPool(2) as shared:
        yield shared


@pytest.fixture(scope="module")
def baseline(tmp_path_factory, server, pool):
    """The reference matrix: 3 tasks × 2 conditions (plain, anchored + structural hints) × 2 repeats."""
    root = tmp_path_factory.mktemp("baseline")
    make_suite(root)
    config = MatrixConfig.load(write_config(root / "matrix.yaml", server.base_url))
    before = len(server.requests)
    summary = run_matrix(config, executor=pool, progress=True)
    return config, summary, result_files(config.out), len(server.requests) - before


def test_the_config_resolves_paths_and_expands_into_stable_readable_units(tmp_path: Path):
    make_suite(tmp_path, count=2)
    config = MatrixConfig.load(write_config(tmp_path / "matrix.yaml", "http://127.0.0.1:9/v1"))
    assert config.suites == [tmp_path / "suite"]
    assert config.out == tmp_path / "out"
    assert config.scaffolds == ["mini-swe-agent"]  # the alias is resolved
    units = expand(config)
    ids = [unit.unit_id for unit in units]
    assert len(ids) == len(set(ids)) == 2 * 2 * 2
    assert ids[0] == "suite__demo__calc-1__mini-swe-agent__scripted__plain__r1"
    assert [unit.repeat for unit in units] == [1, 1, 1, 1, 2, 2, 2, 2]  # whole repeats first
    assert ids == [unit.unit_id for unit in expand(config)]
    assert units[1].options.anchor
    assert units[1].options.hints == "structural"
    assert units[0].task.repo == (tmp_path / "suite/repos/demo__calc-1/calc").resolve()


def test_ad_hoc_task_directories_join_the_suites(tmp_path: Path):
    make_suite(tmp_path, count=1)
    make_bug_repo(tmp_path / "extra")
    (tmp_path / "extra" / "task.json").write_text(json.dumps({"problem_statement": ISSUE, "repo_path": "calc"}))
    path = write_config(tmp_path / "matrix.yaml", "http://127.0.0.1:9/v1", tasks=["extra"], repeats=1)
    units = expand(MatrixConfig.load(path))
    assert [(unit.suite, unit.instance_id, unit.condition) for unit in units] == [
        ("suite", "demo__calc-1", "plain"),
        ("suite", "demo__calc-1", "anchor"),
        ("tasks", "extra", "plain"),
        ("tasks", "extra", "anchor"),
    ]
    assert units[2].task.repo == tmp_path / "extra" / "calc"


def test_unit_ids_are_filesystem_safe_and_disambiguated():
    keys = [("s", "a/b", "mini", "m", "c", "r1"), ("s", "a b", "mini", "m", "c", "r1"), ("s", "x", "m", "o", "c", "r1")]
    ids = unit_ids(keys)
    assert ids[2] == "s__x__m__o__c__r1"
    assert ids[0].startswith("s__a-b__mini")
    assert ids[0] != ids[1]
    assert all("/" not in i and " " not in i for i in ids)
    assert ids == unit_ids(keys)
    with pytest.raises(MatrixConfigError, match="same run twice"):
        unit_ids([keys[0], keys[0]])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"repeats": 0}, "matrix.yaml: repeats: Input should be greater than or equal to 1"),
        ({"colour": "red"}, "matrix.yaml: colour: Extra inputs are not permitted"),
        ({"scaffolds": ["aider"]}, "matrix.yaml: scaffolds: Value error, unknown scaffold(s) ['aider']"),
        ({"conditions": [{"name": "a"}, {"name": "a"}]}, "conditions: names must be unique"),
        ({"conditions": [{"name": "a", "hints": "loud"}]}, "conditions.0.hints: Input should be 'none'"),
        ({"models": [{"name": "m", "temprature": 1}]}, "models.0.temprature: Extra inputs are not permitted"),
        ({"conditions": [{"name": "a", "hints_file": "gone.j2"}]}, "conditions.0.hints_file: no file"),
    ],
)
def test_config_errors_name_the_file_and_the_field(tmp_path: Path, change: dict, message: str):
    path = write_config(tmp_path / "matrix.yaml", "http://127.0.0.1:9/v1", **change)
    with pytest.raises(MatrixConfigError) as error:
        MatrixConfig.load(path)
    assert message in str(error.value)
    assert str(path) in str(error.value)


def test_a_missing_suite_and_an_unknown_executor_are_named(tmp_path: Path):
    config = MatrixConfig.load(write_config(tmp_path / "matrix.yaml", "http://127.0.0.1:9/v1"))
    with pytest.raises(MatrixConfigError, match="not a suite folder"):
        expand(config)
    with pytest.raises(ValueError, match="unknown executor 'dask'"):
        make_executor("dask")


def test_a_matrix_runs_every_unit_and_records_it_once(baseline):
    config, summary, results, requests = baseline
    assert summary.statuses == {"done": 12, "infra_error": 0, "crashed": 0, "skipped_budget": 0, "pending": 0}
    assert summary.exit_statuses == {"Submitted": 12}
    assert (summary.ran, summary.attempts, summary.already_done) == (12, 12, 0)
    assert requests == 6 * PLAIN_CALLS + 6 * ANCHOR_CALLS
    assert json.loads((config.out / "summary.json").read_text()) == summary.model_dump()
    assert sorted(results) == sorted(unit.unit_id for unit in expand(config))
    for unit_id, record in results.items():
        folder = config.out / "units" / unit_id
        assert sorted(p.name for p in folder.iterdir()) == ["attempt-1", "result.json"]  # no staging, no tmp
        assert record["status"] == "done"
        assert record["attempts"][0]["dir"] == "attempt-1"
        assert "return a + b" in (folder / "attempt-1" / "patch.diff").read_text()
        anchored = record["condition"] == "anchor"
        assert record["summary"]["condition"] == ("anchor+hints:structural" if anchored else "plain+hints:none")
        assert record["summary"].get("anchor_status") == ("ok" if anchored else None)


def test_a_rerun_runs_only_the_units_without_a_result(baseline, server, pool, tmp_path: Path):
    config, _, reference, _ = baseline
    copy = config.model_copy(update={"out": tmp_path / "out"})
    shutil.copytree(config.out, copy.out)
    removed = sorted(reference)[:3]  # calc-1's anchor r1/r2 and plain r1
    for unit_id in removed:
        folder = copy.out / "units" / unit_id
        (folder / "result.json").unlink()
        # What a killed run leaves behind: a worker's staging folder and a half-written result.
        (folder / ".attempt-1.999-dead").mkdir()
        (folder / ".result.json.999.tmp").write_text('{"status": "do')
    before = len(server.requests)
    summary = run_matrix(copy, executor=pool, progress=False)
    assert len(server.requests) - before == 2 * ANCHOR_CALLS + PLAIN_CALLS
    assert (summary.already_done, summary.ran, summary.statuses["done"]) == (9, 3, 12)
    rerun = result_files(copy.out)
    assert {k: comparable(v) for k, v in rerun.items()} == {k: comparable(v) for k, v in reference.items()}
    assert [rerun[k]["finished_at"] for k in sorted(reference)[3:]] == [
        reference[k]["finished_at"] for k in sorted(reference)[3:]
    ]  # untouched units kept their files
    for unit_id in removed:
        assert sorted(p.name for p in (copy.out / "units" / unit_id).iterdir()) == ["attempt-1", "result.json"]

    before = len(server.requests)
    assert run_matrix(copy, executor=pool, progress=False).ran == 0
    assert len(server.requests) == before
    redone = run_matrix(copy, executor=pool, redo=True, progress=False)
    assert (redone.ran, redone.already_done) == (12, 0)
    assert len(server.requests) - before == 6 * PLAIN_CALLS + 6 * ANCHOR_CALLS


def test_infrastructure_errors_are_retried_and_crashes_recorded_apart(server, tmp_path: Path):
    """Through the CLI: a model whose server is down, and a condition whose hint template is broken."""
    make_suite(tmp_path, count=1)
    with ScriptedServer() as closed:
        down = closed.base_url  # nothing listens here any more
    (tmp_path / "broken.j2").write_text("{{ no_such_variable }}")
    models = [
        {"name": "scripted", "model": "openai/scripted", "api_base": server.base_url},
        {"name": "down", "model": "openai/scripted", "api_base": down},
    ]
    conditions = [{"name": "plain"}, {"name": "broken", "hints_file": "broken.j2"}]
    path = write_config(tmp_path / "matrix.yaml", server.base_url, models=models, conditions=conditions, repeats=1)
    app = typer.Typer()
    app.command()(eval_command)
    before = len(server.requests)
    result = CliRunner().invoke(app, [str(path), "--no-progress", "--workers", "2"])
    assert result.exit_code == 1, result.output  # a crash outranks an infrastructure error
    summary = json.loads(result.stdout)
    assert summary["statuses"] == {"done": 1, "infra_error": 1, "crashed": 2, "skipped_budget": 0, "pending": 0}
    assert summary["infra_errors"] == {"model_unreachable": 1}
    assert summary["retried_infra_errors"] == {"model_unreachable": 3}  # 1 + max_infra_retries (2)
    assert summary["exit_statuses"] == {"Submitted": 1}
    assert len(server.requests) - before == PLAIN_CALLS  # the crashed units never reached the model
    records = {(r["model"], r["condition"]): r for r in result_files(tmp_path / "out").values()}
    failing = records["down", "plain"]
    assert (failing["status"], failing["infra_error"], failing["exit_status"]) == (
        "infra_error",
        "model_unreachable",
        None,
    )
    assert [a["dir"] for a in failing["attempts"]] == ["attempt-1", "attempt-2", "attempt-3"]
    assert all(
        (tmp_path / "out/units" / failing["unit_id"] / a["dir"] / "run.json").is_file() for a in failing["attempts"]
    )
    crashed = records["scripted", "broken"]
    assert crashed["status"] == "crashed"
    assert len(crashed["attempts"]) == 1
    assert "UndefinedError" in crashed["error"]
    assert "no_such_variable" in crashed["error"]


def test_the_cost_budget_stops_new_units_without_recording_them(server, pool, tmp_path: Path):
    make_suite(tmp_path)
    # 10 input + 5 output tokens per call at $1000 per million each: $0.015 a call, $0.03 a plain unit.
    model = {"name": "priced", "model": "openai/priced", "api_base": server.base_url, "price_per_million": [1000, 1000]}
    fields = {"models": [model], "conditions": [{"name": "plain"}], "workers": 1, "cost_budget": 0.07}
    config = MatrixConfig.load(write_config(tmp_path / "matrix.yaml", server.base_url, **fields))
    summary = run_matrix(config, executor=pool, progress=False)
    # $0.03, $0.06 (< 0.07: one more starts), $0.09: the budget is spent, nothing more starts.
    assert summary.statuses == {"done": 3, "infra_error": 0, "crashed": 0, "skipped_budget": 3, "pending": 0}
    assert summary.budget_stopped
    assert summary.cost == pytest.approx(0.09)
    results = result_files(config.out)
    assert sorted(results) == sorted(unit.unit_id for unit in expand(config)[:3])
    assert all(record["cost"] == pytest.approx(0.03) for record in results.values())
    assert not any((config.out / "units" / unit_id).exists() for unit_id in summary.skipped)

    more = run_matrix(config.model_copy(update={"cost_budget": 1.0}), executor=pool, progress=False)
    assert (more.already_done, more.ran, more.statuses["done"], more.budget_stopped) == (3, 3, 6, False)
    assert more.cost == pytest.approx(0.18)  # the budget counts the units finished before


@pytest.mark.xdist_group("ray")
def test_the_ray_executor_gives_the_same_results_as_the_pool(baseline, tmp_path: Path):
    ray = pytest.importorskip("ray")
    from repoanchor.evals.runs.executor_ray import RayExecutor

    config, _, reference, _ = baseline
    copy = config.model_copy(update={"out": tmp_path / "out"})
    executor = RayExecutor(num_cpus=2)
    try:
        assert executor.slots == 2
        summary = run_matrix(copy, executor=executor, progress=False)
    finally:
        executor.close()
    assert not ray.is_initialized()
    assert summary.statuses["done"] == 12
    results = result_files(copy.out)
    assert {k: comparable(v) for k, v in results.items()} == {k: comparable(v) for k, v in reference.items()}


def test_a_worker_that_dies_is_an_infrastructure_error_and_retried(pool, tmp_path: Path, request):
    """One agent's first command kills its own worker process (as the OOM killer might). The pool breaks and is
    rebuilt; the lost attempt is retried and recorded as `worker_lost`, never as the agent's failure. The other
    unit in flight is lost too when the pool notices the death before it finishes; CPython's pool can notice a
    death late (a worker it spawned on demand is left out of the wait already under way), so that unit may also
    finish first: either way it ends done, and every lost attempt is counted."""
    request.addfinalizer(remove_orphaned_scratch)  # the killed worker cannot clean up
    make_suite(tmp_path, count=1)
    with ScriptedServer(responder=worker_killer(tmp_path / "killed-once")) as killer:
        fields = {"conditions": [{"name": "plain"}], "repeats": 2}
        config = MatrixConfig.load(write_config(tmp_path / "matrix.yaml", killer.base_url, **fields))
        summary = run_matrix(config, executor=pool, progress=False)
    assert summary.statuses["done"] == 2
    histories = sorted(([a["infra_error"] for a in r["attempts"]] for r in result_files(config.out).values()), key=len)
    assert histories in ([[None], ["worker_lost", None]], [["worker_lost", None], ["worker_lost", None]])
    assert summary.retried_infra_errors == {"worker_lost": sum(len(h) - 1 for h in histories)}
    for record in result_files(config.out).values():
        assert record["exit_status"] == "Submitted"
        assert record["error"] is None


def test_a_finished_unit_made_with_other_settings_is_not_reused(server, pool, tmp_path: Path):
    """Editing the temperature, a hints file or the suite and resuming would mix two experiments in one table:
    the rerun refuses, naming what changed and how many units; --redo runs them again."""
    make_suite(tmp_path, count=1)
    hints = tmp_path / "hints.j2"
    hints.write_text("Look at calc.py first.\n")
    fields = {"conditions": [{"name": "plain", "hints_file": str(hints)}], "repeats": 1}
    config = MatrixConfig.load(write_config(tmp_path / "matrix.yaml", server.base_url, **fields))
    assert run_matrix(config, executor=pool, progress=False).statuses["done"] == 1
    (record,) = result_files(config.out).values()
    assert set(record["fingerprint"]) == {"options", "prompts", "hints_file", "task", "suite", "tools"}
    assert run_matrix(config, executor=pool, progress=False).already_done == 1  # unchanged: reused

    warmer = config.model_copy(deep=True)
    warmer.models[0].temperature = 0.7
    with pytest.raises(StaleResults, match=r"changed: options \(1 unit\)"):
        run_matrix(warmer, executor=pool, progress=False)
    hints.write_text("Look at tests first.\n")
    with pytest.raises(StaleResults, match=r"changed: hints_file \(1 unit\)"):
        run_matrix(config, executor=pool, progress=False)
    assert result_files(config.out) == {record["unit_id"]: record}  # nothing was touched
    again = run_matrix(config, executor=pool, redo=True, progress=False)
    assert (again.already_done, again.statuses["done"]) == (0, 1)
    (redone,) = result_files(config.out).values()
    assert redone["fingerprint"]["hints_file"] != record["fingerprint"]["hints_file"]
    hints.write_text("Look at the docs first.\n")
    app = typer.Typer()
    app.command()(eval_command)
    refused = CliRunner().invoke(app, [str(tmp_path / "matrix.yaml"), "--no-progress"])
    assert refused.exit_code == 2, refused.output
    assert "changed: hints_file (1 unit)" in refused.output
    assert "--redo" in refused.output


def test_a_cost_limit_on_a_model_without_a_price_is_refused_unless_turned_off(server, pool, tmp_path: Path):
    """Unpriced, a run's cost is unknown: a cost limit could not stop it and a budget would count it as free."""
    make_suite(tmp_path, count=1)
    fields = {"conditions": [{"name": "plain"}], "repeats": 1, "limits": {"steps": 10}}  # cost: the default 3 USD
    limited = MatrixConfig.load(write_config(tmp_path / "matrix.yaml", server.base_url, **fields))
    with pytest.raises(UnpricedModel, match=r"openai/scripted: no price .* limits.cost 3 cannot be enforced"):
        run_matrix(limited, executor=pool, progress=False)
    assert not (limited.out / "units").exists()  # refused before anything ran
    priced = limited.model_copy(deep=True)
    priced.models[0].price_per_million = (1.0, 1.0)
    assert run_matrix(priced, executor=pool, progress=False).unpriced_runs == 0
    off = limited.model_copy(update={"limits": limited.limits.model_copy(update={"cost": 0})})
    off = off.model_copy(update={"out": tmp_path / "off"})
    summary = run_matrix(off, executor=pool, progress=False)
    assert (summary.statuses["done"], summary.unpriced_runs) == (1, 1)  # said, not counted as 0 USD
