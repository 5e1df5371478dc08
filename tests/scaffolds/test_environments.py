"""Both environments against a real repository (and, for `docker`, a real engine): same contract, no mocks."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from repoanchor.scaffolds.environments.docker_container import DockerContainer, leftover_containers
from repoanchor.scaffolds.environments.local import LocalCheckout
from repoanchor.scaffolds.environments.registry import ENVIRONMENTS, EnvironmentConfig, open_environment
from repoanchor.scaffolds.records import InfraError
from tests.support.bug_repo import FIX_SED, make_bug_repo
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401

KINDS = ["local", "docker"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_bug_repo(tmp_path)


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    return request.param


@pytest.fixture
def environment(kind: str, repo: Path):
    with open_environment(EnvironmentConfig(kind=kind), repo) as env:
        yield env


def git_out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_execute_returns_merged_output_and_return_code(environment) -> None:
    result = environment.execute("echo out; echo err >&2; exit 3")
    assert result.output == "out\nerr\n"
    assert (result.returncode, result.timed_out) == (3, False)
    here = environment.execute("pwd; grep -c 'a - b' calc.py")
    assert here.output.split() == [environment.workdir, "1"]
    assert here.returncode == 0


def test_a_command_past_its_timeout_is_killed(environment) -> None:
    started = time.monotonic()
    result = environment.execute("echo started; sleep 30; echo never", timeout=1)
    assert result.timed_out
    # well under the 30 s the command takes unkilled; the rest is margin for a loaded machine
    assert time.monotonic() - started < 25
    assert "never" not in result.output
    # The environment stays usable after a timeout.
    assert environment.execute("echo again").output == "again\n"


def test_patch_holds_edits_and_new_files_and_applies_to_a_fresh_clone(environment, repo: Path, tmp_path) -> None:
    environment.execute(FIX_SED + " && mkdir -p docs && echo 'notes' > docs/new.txt")
    patch = environment.patch()
    assert "+    return a + b" in patch
    assert "+++ b/docs/new.txt" in patch
    clone = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    check = subprocess.run(["git", "-C", str(clone), "apply", "--check", "-"], input=patch, text=True)
    assert check.returncode == 0
    # patch() uses a private index: what the agent staged (nothing) is unchanged.
    assert environment.execute("git diff --cached --name-only").output == ""


RACY_EDIT = (
    # An edit git's stat cache cannot see from the stat data alone: same size and mtime as the index entry
    # (ctime and inode ignored, as core.checkStat=minimal does and as a fast edit in the same second of a
    # checkout looks), and the index written in that second ("racily clean"): only the content tells.
    "git config core.checkStat minimal && git config core.trustctime false && "
    "touch -d @1600000000 calc.py && git update-index -q --refresh && touch -d @1600000000 .git/index && "
    + FIX_SED
    + " && touch -d @1600000000 calc.py"
)


def test_patch_sees_a_same_size_edit_made_in_the_second_the_index_was_written(environment) -> None:
    # Once a flake: the oracle's one-character fix applied right after checkout was missing from the patch,
    # because patch() copied the index and the copy's new mtime made the racy entry look clean.
    assert environment.execute(RACY_EDIT).returncode == 0
    assert "+    return a + b" in environment.patch()
    assert environment.execute("git status --porcelain").output.strip() == "M calc.py"  # as git itself sees it


def test_bytecode_and_test_caches_never_enter_the_patch(environment) -> None:
    environment.execute("python3 -c 'import calc' && python3 -B -m compileall -q . ; mkdir -p .pytest_cache/v")
    environment.execute("mkdir -p pkg/__pycache__ && echo x > pkg/__pycache__/m.cpython-311.pyc && echo y > stray.pyc")
    environment.execute("echo 'z = 1' > pkg/new.py")
    patch = environment.patch()
    assert "pkg/new.py" in patch
    assert "__pycache__" not in patch
    assert ".pyc" not in patch
    assert ".pytest_cache" not in patch


def test_original_repository_is_untouched(kind: str, repo: Path) -> None:
    head = git_out(repo, "rev-parse", "HEAD")
    objects = git_out(repo, "count-objects", "-v")
    with open_environment(EnvironmentConfig(kind=kind), repo) as env:
        env.execute(
            FIX_SED + " && echo x > extra.txt && git add -A && git -c user.email=a@b -c user.name=a commit -qm x"
        )
    assert git_out(repo, "status", "--porcelain") == ""
    assert git_out(repo, "rev-parse", "HEAD") == head
    assert git_out(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git_out(repo, "count-objects", "-v") == objects  # the run's blobs and commit stayed in its own store


def test_secrets_in_the_host_environment_do_not_reach_commands(environment, monkeypatch) -> None:
    secret = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    output = environment.execute("env").output
    assert secret not in output
    assert "OPENAI_API_KEY" not in output
    assert "PAGER=cat" in output


def test_secret_looking_extra_variables_are_refused(kind: str, repo: Path) -> None:
    if kind == "local":
        with pytest.raises(ValueError, match="GITHUB_TOKEN"):
            LocalCheckout(repo, env={"GITHUB_TOKEN": "x"})
    else:
        with pytest.raises(ValueError, match="GITHUB_TOKEN"):
            DockerContainer(repo, env={"GITHUB_TOKEN": "x"})


def test_local_close_removes_the_checkout(repo: Path) -> None:
    env = LocalCheckout(repo)
    env.close()
    assert not Path(env.workdir).exists()


def test_docker_close_removes_the_container(docker_engine, repo: Path) -> None:
    env = DockerContainer(repo)
    container_id = env.container.id
    assert container_id in {c.id for c in leftover_containers(docker_engine)}
    env.close()
    env.close()  # twice is harmless
    assert container_id not in {c.id for c in leftover_containers(docker_engine)}


def test_docker_runs_as_uid_1000_without_network(docker_engine, repo: Path) -> None:
    with DockerContainer(repo) as env:
        assert env.execute("id -u").output.strip() == "1000"
        assert env.execute("ls /sys/class/net").output.split() == ["lo"]
        assert env.execute("stat -c %u /work/repo /work/home/tmp").output.split() == ["1000", "1000"]
        # Nothing of the host's repository beyond the base commit: no remote, no FETCH_HEAD, one ref.
        assert env.execute("git remote; ls .git/FETCH_HEAD 2>/dev/null").output == ""
        assert env.execute("git rev-parse HEAD").output.strip() == env.base
        # An agent may commit; the patch is still taken against the base commit.
        assert env.execute(FIX_SED + " && git commit -qam fix").returncode == 0
        assert "+    return a + b" in env.patch()


def test_docker_limits_are_set(docker_engine, repo: Path) -> None:
    with DockerContainer(repo, memory="512m", pids=128) as env:
        env.container.reload()
        host = env.container.attrs["HostConfig"]
        assert host["Memory"] == 512 * 1024 * 1024
        assert host["PidsLimit"] == 128
        assert host["NetworkMode"] == "none"
        assert env.container.name.startswith("repoanchor-")
        assert env.container.labels["repoanchor"] == "run"


def test_docker_mounts_are_read_only_when_asked(docker_engine, repo: Path, tmp_path) -> None:
    tool = tmp_path / "tool"
    tool.mkdir(mode=0o755)
    (tool / "bin").write_text("tool\n")
    with DockerContainer(repo, mounts=[(tool, "/opt/tool", "ro")]) as env:
        assert env.execute("cat /opt/tool/bin").output == "tool\n"
        assert env.execute("touch /opt/tool/other").returncode != 0


def test_docker_setup_failure_leaves_no_container(docker_engine, repo: Path, tmp_path) -> None:
    with pytest.raises(InfraError) as caught:
        DockerContainer(repo, mounts=[(tmp_path / "absent", "/opt/absent", "ro")])
    assert caught.value.kind == "environment_setup"
    # Only this test's container could mount tmp_path (other tests may be creating containers right now).
    listed = docker_engine.api.containers(all=True, filters={"label": "repoanchor=run"})
    ours = [c for c in listed if any(str(tmp_path) in m.get("Source", "") for m in c.get("Mounts") or [])]
    assert ours == []


def test_missing_image_is_an_infra_error(docker_engine, repo: Path) -> None:
    with pytest.raises(InfraError) as caught:
        DockerContainer(repo, image="repoanchor/does-not-exist:never")
    assert caught.value.kind == "image_missing"
    assert "repoanchor/does-not-exist:never" in caught.value.message


def test_unreachable_engine_is_an_infra_error(repo: Path, monkeypatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///tmp/nonexistent-docker.sock")
    with pytest.raises(InfraError) as caught:
        DockerContainer(repo)
    assert caught.value.kind == "engine_unavailable"
    assert "start-docker.sh" in caught.value.message
    assert "DOCKER_HOST" in caught.value.message


def test_registry_and_config(repo: Path) -> None:
    assert ENVIRONMENTS == {"local": LocalCheckout, "docker": DockerContainer}
    assert EnvironmentConfig().kind == "local"
    with pytest.raises(ValueError, match="kind"):
        EnvironmentConfig(kind="podman")
    with open_environment(EnvironmentConfig(), repo) as env:
        assert isinstance(env, LocalCheckout)


def test_the_registry_does_not_import_docker() -> None:
    code = "import sys, repoanchor.scaffolds.environments.registry; assert 'docker' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_docker_setup_leaves_nothing_in_the_agents_patch(docker_engine, repo: Path) -> None:
    # A spec's pre_install edits a tracked file, its install generates an unignored folder: neither is the agent's.
    setup = (
        "sed -i 's/Arithmetic/Setup-edited arithmetic/' calc.py && mkdir -p calc.egg-info && echo x > calc.egg-info/PKG"
    )
    with DockerContainer(repo, workdir="/testbed", setup=setup) as env:
        assert env.workdir == "/testbed"
        assert env.execute("pwd").output.strip() == "/testbed"
        assert env.execute("grep -c Setup-edited calc.py").output.strip() == "1"
        assert env.patch() == ""
        env.execute(FIX_SED)
        patch = env.patch()
    assert "+    return a + b" in patch
    assert "Setup-edited" not in patch
    assert "egg-info" not in patch


def test_docker_setup_failure_is_an_infra_error_with_its_output(docker_engine, repo: Path) -> None:
    marker = uuid.uuid4().hex
    with pytest.raises(InfraError, match="setup in /testbed failed") as raised:
        DockerContainer(repo, workdir="/testbed", setup=f"echo no-such-requirement-{marker} >&2; exit 3")
    assert f"no-such-requirement-{marker}" in raised.value.message
    # The half-made container is gone: no container of this engine ran the failing setup.
    ran = [
        c
        for c in docker_engine.containers.list(all=True, filters={"label": "repoanchor=run"})
        if marker in str(c.attrs)
    ]
    assert ran == []


def test_a_release_tag_on_the_base_commit_comes_along_and_no_other(kind: str, repo: Path) -> None:
    # setuptools_scm projects read their version from it; a later tag would name the future.
    tag = ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", "tag"]
    subprocess.run([*tag, "v4.5.0"], check=True)
    base = git_out(repo, "rev-parse", "HEAD").strip()
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q",
                    "--allow-empty", "-m", "later"], check=True)  # fmt: skip
    subprocess.run([*tag, "v9.9.9"], check=True)
    with open_environment(EnvironmentConfig(kind=kind), repo, base) as env:
        assert env.execute("git tag").output.split() == ["v4.5.0"]
        assert env.execute("git describe --tags").output.strip() == "v4.5.0"
