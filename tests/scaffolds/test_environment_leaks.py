"""Leak probe: what an agent can find from inside its environment, after an earlier run of the same task.

A suite keeps each task's repository two folders from its ground truth (SUITE/repos/<task>,
SUITE/ground_truth/<task>.json). From inside the environment, the probes an agent would try show no
pointer back to the suite, no object an earlier run wrote, no remote or config naming the host, and no key.
The container also cannot see the suite at all; `local` shares the host's filesystem by design (it is for
trusted policies, and says so), so the filesystem search runs in the container only.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from repoanchor.scaffolds.environments.registry import EnvironmentConfig, open_environment
from tests.support.bug_repo import make_bug_repo
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.env_images import fixture_env_image_fixture  # noqa: F401


@pytest.fixture(params=["local", "docker", "image"])
def config(request) -> EnvironmentConfig:
    """Each kind offered; `image` as the runs open it: the fixture's environment image, repository at /testbed."""
    if request.param == "local":
        return EnvironmentConfig(kind="local")
    request.getfixturevalue("docker_engine")
    if request.param == "docker":
        return EnvironmentConfig(kind="docker")
    image = request.getfixturevalue("fixture_env_image")
    return EnvironmentConfig(kind="docker", image=image, workdir="/testbed", setup="true")


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, Path, str]:
    """(SUITE, its task repository, the ground truth's canary)."""
    root = tmp_path / "SUITE"
    repo = make_bug_repo(root / "repos")
    canary = f"GOLD-CANARY-{uuid.uuid4().hex}"
    (root / "ground_truth").mkdir()
    (root / "ground_truth" / "calc.json").write_text(json.dumps({"patch": canary}))
    return root, repo, canary


def test_nothing_of_the_suite_an_earlier_run_or_the_host_is_reachable(config, suite, monkeypatch):
    kind = "local" if config.kind == "local" else "docker"
    root, repo, canary = suite
    earlier = f"EARLIER-RUN-{uuid.uuid4().hex}"
    with open_environment(config, repo) as env:
        done = env.execute(
            f"echo {earlier} > notes.txt && git add -A && git -c user.name=a -c user.email=a@b commit -qm wip"
            " && git hash-object notes.txt"
        )
        assert done.returncode == 0, done.output
        blob = done.output.split()[-1]

    key = f"sk-leak-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with open_environment(config, repo) as env:
        probes = {
            "cat .git": env.execute("cat .git; cat .git/config; ls .git").output,
            "fsck": env.execute("git fsck --unreachable --no-reflogs 2>&1").output,
            "object": env.execute(f"git cat-file -t {blob} 2>&1").output,
            "history": env.execute("git log --all --format=%H%n%B 2>&1").output,
            "remotes": env.execute("git remote -v; git config --list --show-origin").output,
            "reflog": env.execute("git reflog --all 2>&1; cat .git/logs/HEAD 2>&1").output,
            "env": env.execute("env").output,
        }
        if kind == "docker":
            search = (
                "find / -name '*ground_truth*' 2>/dev/null; grep -rl --exclude-dir=proc --exclude-dir=sys GOLD-CANARY /"
            )
            probes["find"] = env.execute(search + " 2>/dev/null", timeout=300).output
    assert "gitdir" not in probes["cat .git"]
    assert "unreachable" not in probes["fsck"]
    assert "blob" not in probes["object"], "the earlier run's blob is in this run's object store"
    assert "wip" not in probes["history"], "the earlier run's commit is in this run's history"
    for name, output in probes.items():
        assert str(root) not in output, f"{name} names the suite: {output[-500:]}"
        assert key not in output, f"{name} shows the key"
        assert "OPENAI_API_KEY" not in output, f"{name} names the key's variable"
        assert canary not in output, f"{name} shows the ground truth"
    if kind == "docker":
        assert probes["find"].strip() == ""
