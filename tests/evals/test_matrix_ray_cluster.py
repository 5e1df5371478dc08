"""The Ray executor on a real two-node cluster of this machine, without the driver's folders: units travel with
their repository as a bundle, come back as archives, and a node killed under a running unit costs one retry.

Each node has its own temp and working folder. A worker could still read the driver's files (one user, one
machine), so the test makes that fail instead: the travelling units hold no driver path, and the suite folder is
renamed away once every task has been sent, before the units that remain (the lost one's retry included) run."""

from __future__ import annotations

import pickle
import threading
from pathlib import Path

import pytest

from repoanchor.evals.runs.executors import LocalPool
from repoanchor.evals.runs.matrix import MatrixConfig, expand
from repoanchor.evals.runs.run_matrix import run_matrix
from repoanchor.evals.runs.shipping import travelling
from repoanchor.scaffolds.environments.bundle import bundle_repository
from repoanchor.scaffolds.models.scripted_server import ScriptedServer
from tests.support.matrix_suite import comparable, make_suite, oracle, result_files, write_config
from tests.support.ray_cluster import local_cluster

pytestmark = pytest.mark.xdist_group("ray-cluster")
MATRIX = {"conditions": [{"name": "plain"}], "repeats": 2}  # 2 tasks x 2 repeats: both tasks are sent first
WAIT = 120  # seconds; only a broken run waits this long


@pytest.fixture(scope="module", autouse=True)
def api_key():
    # Every node's own environment: set before the nodes start, which their workers inherit. Never shipped.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-cluster-0123456789")
        yield


@pytest.fixture
def cluster():
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()
    with local_cluster(2) as (nodes, (_, worker)):
        yield nodes, worker


class Gate:
    """The oracle, holding every run's first reply until `open` is set: the test knows when both nodes are
    running a unit (each node has one CPU, so two started runs are one per node), whatever the machine's load."""

    def __init__(self) -> None:
        self.started, self.lock = 0, threading.Lock()
        self.both_running, self.open = threading.Event(), threading.Event()

    def __call__(self, body: dict):
        if not any(message.get("role") == "assistant" for message in body.get("messages", [])):
            with self.lock:
                self.started += 1
                if self.started == 2:
                    self.both_running.set()
            self.open.wait(WAIT)
        return oracle(body)


def kill_when_both_run(gate: Gate, nodes, worker, suite: Path, errors: list) -> None:
    try:
        assert gate.both_running.wait(WAIT), "two units never ran at once"
        suite.rename(suite.with_name("suite-hidden"))  # every task was sent: nothing may read the suite now
        nodes.remove_node(worker)  # one of the two running units dies with it
    except BaseException as exc:  # seen by the test thread, which asserts on it
        errors.append(exc)
    finally:
        gate.open.set()


def pool_results(root: Path, api_base: str) -> dict[str, dict]:
    make_suite(root, count=2)
    config = MatrixConfig.load(write_config(root / "matrix.yaml", api_base, **MATRIX))
    with LocalPool(2) as pool:
        assert run_matrix(config, executor=pool, progress=False).statuses["done"] == 4
    return result_files(config.out)


def test_units_travel_without_driver_paths_and_a_lost_node_is_retried(cluster, tmp_path: Path):
    from repoanchor.evals.runs.executor_ray import RayExecutor

    nodes, worker = cluster
    driver = tmp_path / "driver"
    suite = make_suite(driver, count=2)
    gate, errors = Gate(), []
    policy = [oracle]  # one server for both runs: its address is part of each result's fingerprint
    with ScriptedServer(responder=lambda body: policy[0](body)) as server:
        reference = pool_results(tmp_path / "pool", server.base_url)
        policy[0] = gate
        config = MatrixConfig.load(write_config(driver / "matrix.yaml", server.base_url, **MATRIX))
        for unit in expand(config):
            assert str(tmp_path).encode() not in pickle.dumps(travelling(unit, "0" * 40))
        killer = threading.Thread(target=kill_when_both_run, args=(gate, nodes, worker, suite, errors))
        killer.start()
        try:
            with RayExecutor(address=nodes.address) as executor:
                assert executor.slots == 2
                summary = run_matrix(config, executor=executor, progress=False)
        finally:
            gate.open.set()
            killer.join()
    assert not errors, errors
    assert summary.statuses["done"] == 4
    assert summary.retried_infra_errors == {"worker_lost": 1}
    results = result_files(config.out)
    histories = sorted(([a["infra_error"] for a in record["attempts"]] for record in results.values()), key=len)
    assert histories == [[None], [None], [None], ["worker_lost", None]]
    for unit_id, record in results.items():
        expected = comparable(reference[unit_id])
        assert {**comparable(record), "attempts": None} == {**expected, "attempts": None}
        last = config.out / "units" / unit_id / record["attempts"][-1]["dir"]
        pooled = tmp_path / "pool" / "out" / "units" / unit_id / "attempt-1"
        assert sorted(p.name for p in last.iterdir()) == sorted(p.name for p in pooled.iterdir())
        assert (last / "patch.diff").read_bytes() == (pooled / "patch.diff").read_bytes()


def test_a_bundle_holds_the_base_commit_its_history_and_its_tags_only(tmp_path: Path):
    from repoanchor.scaffolds.environments.bundle import unpack_bundle
    from repoanchor.scaffolds.environments.local import git

    repo = make_suite(tmp_path, count=1) / "repos" / "demo__calc-1" / "calc"
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "tag", "v1.0")
    (repo / "later.txt").write_text("not for the agent\n")
    git(repo, "add", "later.txt")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "later")
    git(repo, "tag", "v2.0")
    data, commit = bundle_repository(repo, base)
    assert commit == base
    (tmp_path / "node").mkdir()
    copy = unpack_bundle(data, commit, tmp_path / "node")
    assert git(copy, "rev-parse", "HEAD").strip() == base
    assert git(copy, "tag").split() == ["v1.0"]
    assert git(copy, "rev-list", "--all").split() == git(repo, "rev-list", base).split()
    assert str(tmp_path / "suite") not in (copy / ".git" / "config").read_text()


def test_a_hints_file_travels_as_its_text_and_renders_the_same(tmp_path: Path):
    from repoanchor import prompts

    hint = tmp_path / "hint.j2"
    hint.write_text("{% if true %}Look for proxies.{% endif %}\n", encoding="utf-8")
    text = hint.read_text(encoding="utf-8")
    travelled = prompts.hints("none", "/not/on/this/node/hint.j2", text=text)
    assert travelled == prompts.hints("none", str(hint)) == "Look for proxies."
