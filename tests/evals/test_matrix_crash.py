"""Crash safety: `repoanchor eval` SIGKILLed at seeded random points, resumed each time, ends with exactly
the results of an unbroken run: same result files, same contents, every one valid JSON, nothing extra."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from repoanchor.scaffolds.scripted_server import ScriptedServer
from tests.support.matrix_suite import (
    comparable,
    make_suite,
    oracle,
    remove_orphaned_worktrees,
    result_files,
    write_config,
)

KILLS = 5
SEED = 20261129
UNITS = 3 * 2 * 3  # tasks × conditions × repeats: enough that five kills land before the matrix is done
# Two plain conditions: a unit takes ~0.3 s, so the test's time goes into kills and resumes, not agent runs.
CONDITIONS = [{"name": "plain"}, {"name": "hints", "hints": "structural"}]


def start(config: Path) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-crash-0123456789"}
    command = [sys.executable, "-m", "repoanchor.evals.cli_eval", str(config), "--no-progress"]
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
    deadline = time.monotonic() + 15
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


def kill_at_a_random_point(config: Path, out: Path, rng: random.Random) -> int | None:
    """Start the matrix, let it finish 0-2 more units, wait a random moment, SIGKILL the driver alone:
    with 0, somewhere in start-up (workers spawning and importing), else just after a result was written,
    with the other worker mid-run. Returns the killed driver's process group; None when the matrix
    finished first."""
    more = rng.choice([0, 1, 2])
    wanted = count_results(out) + more
    process = start(config)
    deadline = time.monotonic() + 60
    while count_results(out) < wanted and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(rng.uniform(0.2, 3.0) if more == 0 else rng.uniform(0, 0.2))
    killed = process.poll() is None
    if killed:
        process.send_signal(signal.SIGKILL)
    process.wait()
    process.stdout.close()  # a fork server still importing holds the other end for a while
    process.stderr.close()
    assert_ends(process.pid, workers)  # no worker may go on writing while the next driver resumes
    return process.pid if killed else None


def test_a_matrix_killed_five_times_resumes_to_the_results_of_an_unbroken_run(tmp_path: Path, request):
    request.addfinalizer(lambda: remove_orphaned_worktrees(tmp_path))  # killed workers cannot clean up
    make_suite(tmp_path)
    with ScriptedServer(responder=oracle) as server:
        unbroken = write_config(
            tmp_path / "unbroken.yaml", server.base_url, repeats=3, out="unbroken", conditions=CONDITIONS
        )
        broken = write_config(tmp_path / "broken.yaml", server.base_url, repeats=3, out="broken", conditions=CONDITIONS)
        assert run_to_the_end(unbroken)["statuses"]["done"] == UNITS

        rng, killed = random.Random(SEED), []
        for _ in range(3 * KILLS):
            killed += [kill_at_a_random_point(broken, tmp_path / "broken", rng)]
            assert_every_result_is_whole(tmp_path / "broken")
            assert count_results(tmp_path / "broken") < UNITS, "finished before five kills: enlarge the matrix"
            if len(list(filter(None, killed))) == KILLS:
                break
        assert len(list(filter(None, killed))) == KILLS
        summary = run_to_the_end(broken)
        for group in filter(None, killed):  # fork servers still importing when their driver died end later
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
    assert sorted(p.name for p in (tmp_path / "broken").iterdir()) == ["summary.json", "units"]
    assert json.loads((tmp_path / "broken" / "summary.json").read_text()) == summary
