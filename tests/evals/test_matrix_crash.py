"""Crash safety: `repoanchor eval` SIGKILLed at five named points of the driver (failpoints, not timers, so
machine load cannot move them), resumed each time, ends with exactly the results of an unbroken run: same
result files, same contents, every one valid JSON, nothing extra, and no worker outliving its driver."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from repoanchor.evals.harness.failpoints import ENV as FAILPOINT_ENV
from repoanchor.evals.harness.failpoints import SCOPE_ENV as FAILPOINT_SCOPE_ENV
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from tests.support.matrix_suite import (
    comparable,
    make_suite,
    oracle,
    remove_orphaned_scratch,
    result_files,
    write_config,
)

UNITS = 3 * 2 * 3  # tasks × conditions × repeats: more than the kills below finish together
KILLS = [
    "matrix.submitted#1",  # start-up: the first unit in flight, nothing recorded
    "matrix.attempt-moved#2",  # an attempt folder in place, its unit's result not yet written
    "matrix.result-written#3",  # a result written, the other worker mid-run
    "matrix.submitted#4",
    "matrix.result-written#1",
]
WORKERS_END_WITHIN = 60
"""Seconds a killed driver's workers get to notice and exit (they take well under one on an idle machine;
the margin is for a loaded CI machine and costs nothing when they end sooner)."""
# Two plain conditions: a unit takes ~0.3 s, so the test's time goes into kills and resumes, not agent runs.
CONDITIONS = [{"name": "plain"}, {"name": "hints", "hints": "structural"}]


def start(config: Path, failpoint: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-crash-0123456789"}
    if failpoint:  # the driver alone dies there; its workers must notice and exit by themselves
        env.update({FAILPOINT_ENV: failpoint, FAILPOINT_SCOPE_ENV: "process"})
    command = [sys.executable, "-m", "repoanchor.evals.cli.eval_matrix", str(config), "--no-progress"]
    # Its own process group, so the test can see whether the driver's workers outlived it.
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def count_results(out: Path) -> int:
    return len(list((out / "units").glob("*/result.json")))


def live_members(group: int) -> dict[int, int]:
    """pid -> parent pid of a process group's running processes (zombies, already dead, do not count)."""
    live = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            live[int(stat.parent.name)] = int(fields[1])
    return live


def workers(group: int) -> list[int]:
    """Members started by other members: pool workers (children of the fork server) and their commands.
    The fork server and resource tracker themselves were the driver's children and never write results."""
    members = live_members(group)
    return [pid for pid, parent in members.items() if parent in members]


def assert_ends(group: int, which=live_members) -> None:
    deadline = time.monotonic() + WORKERS_END_WITHIN
    while which(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = which(group)
    if left:
        os.killpg(group, signal.SIGKILL)
    assert not left, f"processes outlived their driver: {left}"


def run_to_the_end(config: Path) -> dict:
    process = start(config)
    try:
        output, errors = process.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    assert process.returncode == 0, errors.decode()
    assert_ends(process.pid)
    return json.loads(output)


def assert_every_result_is_whole(out: Path) -> None:
    for path in (out / "units").glob("*/result.json"):
        record = json.loads(path.read_text())  # a torn write would fail here
        assert record["unit_id"] == path.parent.name
        assert record["status"] == "done"


def kill_at(config: Path, point: str) -> int:
    """Run the matrix until its driver dies at `point`; the killed driver's process group."""
    process = start(config, point)
    try:
        _, errors = process.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    assert process.returncode == -signal.SIGKILL, (point, process.returncode, errors.decode()[-2000:])
    assert_ends(process.pid, workers)  # no worker may go on writing while the next driver resumes
    return process.pid


def test_a_matrix_killed_five_times_resumes_to_the_results_of_an_unbroken_run(tmp_path: Path, request):
    request.addfinalizer(remove_orphaned_scratch)  # killed workers cannot clean up
    make_suite(tmp_path)
    with ScriptedServer(responder=oracle) as server:
        unbroken = write_config(
            tmp_path / "unbroken.yaml", server.base_url, repeats=3, out="unbroken", conditions=CONDITIONS
        )
        broken = write_config(tmp_path / "broken.yaml", server.base_url, repeats=3, out="broken", conditions=CONDITIONS)
        assert run_to_the_end(unbroken)["statuses"]["done"] == UNITS

        killed = []
        for point in KILLS:
            killed.append(kill_at(broken, point))
            assert_every_result_is_whole(tmp_path / "broken")
        assert count_results(tmp_path / "broken") < UNITS
        summary = run_to_the_end(broken)
        for group in killed:  # fork servers still importing when their driver died end later
            assert_ends(group)

    assert summary["statuses"]["done"] == UNITS
    assert summary["already_done"] + summary["ran"] == UNITS
    expected, resumed = result_files(tmp_path / "unbroken"), result_files(tmp_path / "broken")
    assert {k: comparable(v) for k, v in resumed.items()} == {k: comparable(v) for k, v in expected.items()}
    for unit_id, record in resumed.items():
        folder = tmp_path / "broken" / "units" / unit_id
        # One record per unit, its attempt folder, and nothing a killed run left half-done.
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["result.json", *(a["dir"] for a in record["attempts"])]
        )
    assert sorted(p.name for p in (tmp_path / "broken").iterdir()) == ["matrix.json", "summary.json", "units"]
    assert json.loads((tmp_path / "broken" / "summary.json").read_text()) == summary
