"""Running and grading instances: the embedded fixture end to end, SWE-bench semantics, real rows' commands."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.harness import eval_script, grading, instance_env, venv_build
from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.harness.dependencies.setup_files import SetupFiles
from repoanchor.evals.harness.eval_script import install_hint
from repoanchor.evals.suites.checks.validate import level3_before
from repoanchor.evals.suites.remap import Rejected
from repoanchor.scaffolds.records import InfraError
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.env_images import fixture_env_image_fixture  # noqa: F401
from tests.support.shared import shared_path

# A plausible but wrong fix for fixture__ledger-1: it accepts commas anywhere, so "1,23" parses as 123.
WRONG_FIX = r"""diff --git a/ledger/parsing.py b/ledger/parsing.py
--- a/ledger/parsing.py
+++ b/ledger/parsing.py
@@ -16,1 +16,1 @@ _AMOUNT = re.compile(
-    (?P<number>\d+(?:\.\d+)?)
+    (?P<number>[\d,]+(?:\.\d+)?)
@@ -35,1 +35,1 @@ def parse_amount(text: str, default_currency: str = DEFAULT_CURRENCY) -> Money:
-    value = Decimal(match["number"])
+    value = Decimal(match["number"].replace(",", ""))
"""
NOT_APPLYING = "diff --git a/ledger/money.py b/ledger/money.py\n--- a/ledger/money.py\n+++ b/ledger/money.py\n"
NOT_APPLYING += "@@ -1,1 +1,1 @@\n-this line is not in the file\n+neither is this one\n"
# Tries to make ledger-3's new test pass by writing it into the test file; the tests are reset first.
TEST_TAMPERING = """diff --git a/tests/test_reports.py b/tests/test_reports.py
--- a/tests/test_reports.py
+++ b/tests/test_reports.py
@@ -1,1 +1,5 @@
 from ledger import Money, format_trial_balance, trial_balance
+
+
+def test_empty_journal():
+    pass
"""


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    """The materialized fixture and one prepared `local` work folder per instance."""
    root = tmp_path_factory.mktemp("ledger")
    _, dataset = materialize_fixture(root)
    rows = load_dataset(dataset).by_id()
    envs = {
        iid: (root / iid, instance_env.prepare(row, "local", root / iid, repo_cache=root, cache_dir=root / "venvs"))
        for iid, row in rows.items()
    }
    return rows, envs


def run(fixture, instance_id: str, patch: str, **kwargs) -> tuple[grading.TestRun, grading.Grade]:
    rows, envs = fixture
    workdir, env = envs[instance_id]
    result = grading.run_tests(workdir, rows[instance_id], patch, env, **kwargs)
    return result, grading.grade(rows[instance_id], result.outcomes, result.status)


def test_relative_cache_folders_work_although_install_steps_run_in_the_checkout(fixture, tmp_path, monkeypatch):
    """`suite build --venv-cache venvs` once failed with FileNotFoundError 'venvs/<key>/bin/python'."""
    rows, envs = fixture
    workdir, _ = envs["fixture__ledger-1"]
    monkeypatch.chdir(workdir.parent)
    row = rows["fixture__ledger-1"]
    env = instance_env.prepare(row, "local", tmp_path / "w", repo_cache=Path(), cache_dir=Path("venvs"))
    result = grading.run_tests(tmp_path / "w", row, row["patch"], env)
    assert grading.grade(row, result.outcomes, result.status).resolved, result.log[-3000:]


@pytest.mark.parametrize("instance_id", ["fixture__ledger-1", "fixture__ledger-2", "fixture__ledger-3"])
def test_gold_patch_resolves_and_no_patch_does_not(fixture, instance_id):
    row = fixture[0][instance_id]
    gold_run, gold = run(fixture, instance_id, row["patch"])
    assert gold.resolved, gold_run.log[-3000:]
    assert gold.f2p.success == row["FAIL_TO_PASS"]
    assert gold.p2p.success == row["PASS_TO_PASS"]
    empty_run, empty = run(fixture, instance_id, "")
    assert (empty_run.status, empty.status, empty.resolved) == ("completed", "RESOLVED_NO", False)
    assert empty.f2p.failure == row["FAIL_TO_PASS"]
    assert empty.p2p.failure == []
    # Grading is redone from the stored log alone, with the same verdict.
    stored = grading.TestRun.model_validate_json(gold_run.model_dump_json())
    assert grading.grade_run(row, stored) == gold


def test_fixture_environment_uses_this_interpreter(fixture):
    _, env = fixture[1]["fixture__ledger-1"]
    assert (env.route, env.venv, env.pre_install, env.install) == ("current", None, [], None)


def test_wrong_patch_breaks_pass_to_pass(fixture):
    result, verdict = run(fixture, "fixture__ledger-1", WRONG_FIX)
    assert result.status == "completed"
    assert verdict.f2p.failure == []
    assert verdict.p2p.failure == [f"tests/test_parsing.py::test_rejects_misplaced_commas[{i}]" for i in ["short"]] + [
        f"tests/test_parsing.py::test_rejects_misplaced_commas[{i}]" for i in ["long", "leading", "double"]
    ]
    assert not verdict.resolved


def test_patch_that_does_not_apply_is_reported(fixture):
    result, verdict = run(fixture, "fixture__ledger-2", NOT_APPLYING)
    assert result.status == "patch_apply_failed"
    assert result.outcomes == {}
    assert eval_script.PATCH_APPLY_FAILED in result.log
    assert (verdict.status, verdict.resolved) == ("patch_apply_failed", False)
    # The failed attempt leaves nothing behind for the next run.
    assert run(fixture, "fixture__ledger-2", fixture[0]["fixture__ledger-2"]["patch"])[1].resolved


def test_candidate_cannot_change_the_grading_tests(fixture):
    result, verdict = run(fixture, "fixture__ledger-3", TEST_TAMPERING)
    assert result.status == "completed"
    assert "tests/test_reports.py::test_empty_journal" in verdict.f2p.failure


def test_test_patch_that_does_not_apply(fixture):
    rows, envs = fixture
    row = {**rows["fixture__ledger-1"], "test_patch": NOT_APPLYING.replace("ledger/money.py", "tests/test_money.py")}
    result = grading.run_tests(*envs["fixture__ledger-1"][:1], row, "", envs["fixture__ledger-1"][1])
    assert result.status == "test_patch_apply_failed"


def test_timeout_kills_the_tests(fixture):
    rows, envs = fixture
    row = {**rows["fixture__ledger-3"], "repoanchor_test_cmd": "sleep 30; python -m pytest {tests}"}
    workdir, env = envs["fixture__ledger-3"]
    result = grading.run_tests(workdir, row, "", env, timeout=1)
    assert result.status == "timeout"
    # well under the 30 s the command takes unkilled; the rest is margin for a loaded machine
    assert result.seconds < 25
    assert grading.grade_run(row, result).status == "timeout"


def grade_outcomes(outcomes: dict[str, str], **row) -> grading.Grade:
    base = {"instance_id": "x", "repo": "acme/widgets", "FAIL_TO_PASS": ["f1", "f2"], "PASS_TO_PASS": ["p1"]}
    return grading.grade({**base, **row}, outcomes)


def test_swebench_semantics():
    assert grade_outcomes({"f1": "PASSED", "f2": "XFAIL", "p1": "PASSED"}).resolved
    partial = grade_outcomes({"f1": "PASSED", "f2": "FAILED", "p1": "PASSED"})
    assert (partial.status, partial.resolved) == ("RESOLVED_PARTIAL", False)
    missing = grade_outcomes({"f1": "PASSED", "f2": "PASSED"})  # a test absent from the log has failed
    assert (missing.p2p.failure, missing.resolved) == (["p1"], False)
    assert grade_outcomes({"f1": "ERROR", "f2": "PASSED", "p1": "PASSED"}).f2p.failure == ["f1"]
    fail_only = grade_outcomes({"f1": "PASSED"}, eval_type="fail_only")  # only an explicit FAILED counts
    assert fail_only.resolved


def verified_row(instance_id: str) -> dict:
    path = shared_path("data", "swebench", "SWE-bench_Verified_test.parquet")
    if not path.is_file():
        pytest.skip(f"no shared SWE-bench data at {path}")
    return load_dataset(path).by_id()[instance_id]


def test_real_rows_take_their_test_command_from_eval_script():
    flask = verified_row("pallets__flask-5014")
    assert eval_script.command_for(flask, "/w") == "pytest -rA tests/test_blueprints.py"
    django = verified_row("django__django-11099")
    command = eval_script.command_for(django, "/w")
    assert command.splitlines()[0] == "export LANG=en_US.UTF-8"
    assert "./tests/runtests.py" in command
    assert "/testbed" not in command
    # Without an eval_script the same command is rebuilt from swebench's spec and the test patch.
    rebuilt = {k: v for k, v in flask.items() if k != "eval_script"}
    assert eval_script.command_for(rebuilt) == "pytest -rA tests/test_blueprints.py"


def test_log_parsers_are_swebench_ones():
    flask = verified_row("pallets__flask-5014")
    parse = eval_script.log_parser(flask)
    log = "PASSED tests/test_blueprints.py::test_a\nFAILED tests/test_blueprints.py::test_b - AssertionError\n"
    assert parse(log) == {"tests/test_blueprints.py::test_a": "PASSED", "tests/test_blueprints.py::test_b": "FAILED"}
    sympy = eval_script.log_parser({"instance_id": "s", "repo": "sympy/sympy"})
    assert sympy("test_point ok\ntest_issue_11617 F\n") == {"test_point": "PASSED", "test_issue_11617": "FAILED"}
    with pytest.raises(InfraError, match="no swebench log parser"):
        eval_script.log_parser({"instance_id": "x", "repo": "acme/widgets"})


def test_install_specs_come_from_swebench_410(tmp_path):
    flask = venv_build.install_spec("pallets/flask", "2.3")
    assert flask["python"] == "3.11"
    assert venv_build.install_spec("fixture/ledger", "0.3") is None
    run_here, skipped = venv_build.split_pre_install(venv_build.install_spec("django/django", "1.7"))
    assert run_here == []
    assert any("apt-get" in step for step in skipped)
    assert venv_build.split_pre_install(venv_build.install_spec("pytest-dev/pytest", "6.3")) == (
        ["sed -i 's/>=>=/>=/' setup.cfg"],
        [],
    )
    run_here, skipped = venv_build.split_pre_install(venv_build.install_spec("matplotlib/matplotlib", "3.5"))
    assert 'QHULL_BUILD_DIR="$PWD/build"' in run_here  # SWE-bench's /testbed is the folder the steps run in
    assert not [step for step in [*run_here, *skipped] if "/testbed" in step]
    assert [step.split()[0] for step in skipped] == ["apt-get", "wget"]
    checkout = tmp_path / "flask"
    (checkout / "requirements").mkdir(parents=True)
    (checkout / "requirements" / "dev.txt").write_text("-r tests.txt\n-e .\npre-commit\n")
    (checkout / "requirements" / "tests.txt").write_text("pytest==7.3.1\n")
    steps, skipped = venv_build.dependency_steps("pallets/flask", flask, SetupFiles(checkout), tmp_path)
    assert steps[0] == f"python -m pip install -r {tmp_path / 'requirements.txt'}"
    assert (tmp_path / "requirements.txt").read_text() == "pytest==7.3.1\npre-commit"
    assert "'Werkzeug==2.3.7'" in steps[1]
    assert skipped == []
    xarray = venv_build.install_spec("pydata/xarray", "2022.06")
    steps, skipped = venv_build.dependency_steps("pydata/xarray", xarray, SetupFiles(checkout), tmp_path)
    # the pins only: the environment file is installed after them, under them (test_venv_environment_file.py)
    assert (len(steps), skipped) == (1, [])
    assert "'numpy==1.23.0'" in steps[0]


def test_find_python():
    assert Path(venv_build.find_python("3.11")).exists()
    with pytest.raises(InfraError, match="Python 2.5 is not installed"):
        venv_build.find_python("2.5")


def test_image_provider_needs_an_image():
    with pytest.raises(InfraError, match="no `image` column"):
        instance_env.image_env({"instance_id": "x"})


@pytest.mark.skipif(not os.environ.get("REPOANCHOR_REPO_CACHE"), reason="set REPOANCHOR_REPO_CACHE to a repo cache")
def test_real_swebench_instance_locally(tmp_path):
    """pallets__flask-5014 with a clone of pallets/flask in $REPOANCHOR_REPO_CACHE/pallets__flask (slow)."""
    row = verified_row("pallets__flask-5014")
    cache = Path(os.environ["REPOANCHOR_REPO_CACHE"])
    env = instance_env.prepare(row, "local", tmp_path / "w", repo_cache=cache, cache_dir=cache / ".venvs")
    assert env.route == "spec"
    empty = grading.run_tests(tmp_path / "w", row, "", env)
    assert not grading.grade(row, empty.outcomes, empty.status).resolved
    gold = grading.run_tests(tmp_path / "w", row, row["patch"], env)
    assert grading.grade(row, gold.outcomes, gold.status).resolved, gold.log[-3000:]


PYTEST_MODULES = {"pytest": "pytest", "_pytest": "pytest", "py": "pytest", "pluggy": "pluggy"}
PYTEST_MODULES |= {"iniconfig": "iniconfig", "packaging": "packaging", "pygments": "pygments"}


def fixture_image(client, repo: Path) -> str:
    """A SWE-bench-style image without a registry: the base image, the fixture at /testbed, pytest copied in."""
    import importlib.metadata
    import io
    import tarfile

    from repoanchor.scaffolds.environments.docker_container import BASE_IMAGE

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(repo, arcname="testbed")
        site = "usr/local/lib/python3.11/dist-packages"
        for module, distribution in PYTEST_MODULES.items():
            path = Path(__import__(module).__file__)
            path = path.parent if path.name == "__init__.py" else path  # `py` is a single-file shim
            tar.add(path, arcname=f"{site}/{path.name}")
            files = importlib.metadata.distribution(distribution).files
            dist_info = next(f for f in files if f.name == "METADATA").locate().parent
            tar.add(dist_info, arcname=f"{site}/{dist_info.name}")
    container = client.containers.run(BASE_IMAGE, ["sleep", "infinity"], detach=True, network_mode="none")
    try:
        container.put_archive("/", buffer.getvalue())
        container.exec_run(["ln", "-s", "/usr/bin/python3", "/usr/local/bin/python"])
        return container.commit(repository="repoanchor/test-fixture-ledger", tag="latest").id
    finally:
        container.remove(force=True)


def test_image_provider_runs_the_fixture_in_a_container(docker_engine, tmp_path):
    repo, dataset = materialize_fixture(tmp_path)
    image = fixture_image(docker_engine, repo)
    try:
        row = load_dataset(dataset).by_id()["fixture__ledger-2"]
        env = instance_env.prepare(row, "image", tmp_path / "unused", image=image)
        gold = grading.run_tests(tmp_path / "unused", row, row["patch"], env, timeout=120)
        assert grading.grade(row, gold.outcomes, gold.status).resolved, gold.log[-3000:]
        empty = grading.run_tests(tmp_path / "unused", row, "", env, timeout=120)
        assert grading.grade(row, empty.outcomes, empty.status).status == "RESOLVED_NO"
        assert grading.run_tests(tmp_path / "unused", row, NOT_APPLYING, env).status == "patch_apply_failed"
    finally:
        docker_engine.images.remove(image, force=True)


CANARY_CONFTEST = """\
import os
import socket

FOUND = ["CANARY-ENV " + repr(sorted(os.environ.items()))]
_probe = socket.socket()
_probe.settimeout(3)
try:
    _probe.connect(("{host}", {port}))
    FOUND.append("CANARY-CONNECTED")
except OSError as error:
    FOUND.append("CANARY-BLOCKED " + repr(error))


def pytest_terminal_summary(terminalreporter):
    for line in FOUND:
        terminalreporter.write_line(line)
"""
"""Collection output is captured: the findings go into the log through the terminal summary instead."""


class Listener:
    """A TCP listener on the host that counts whoever connects."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        import socket
        import threading

        self.server = socket.create_server((host, 0))
        self.server.settimeout(0.2)
        self.port, self.connections, self._open = self.server.getsockname()[1], 0, True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while self._open:
            try:
                self.server.accept()[0].close()
                self.connections += 1
            except TimeoutError:
                continue

    def close(self) -> None:
        self._open = False
        self.thread.join(timeout=5)
        self.server.close()


def canary_patch(row: dict, host: str, port: int) -> str:
    """The gold patch plus a new conftest.py that prints the environment and tries to connect out."""
    lines = CANARY_CONFTEST.format(host=host, port=port).splitlines()
    added = "".join(f"+{line}\n" for line in lines)
    conftest = "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n+++ b/conftest.py\n"
    return row["patch"] + conftest + f"@@ -0,0 +1,{len(lines)} @@\n" + added


@pytest.mark.parametrize("provider", ["local", "image", "env-image"])
def test_a_candidates_conftest_sees_no_key_and_reaches_no_one(provider, fixture, tmp_path, monkeypatch, request):
    """A candidate patch's conftest.py runs when the tests are collected: it must find no key in its environment
    and no way out (the host's loopback services included), with either provider; the grade still holds."""
    key = f"sk-canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    rows, envs = fixture
    row = rows["fixture__ledger-2"]
    listener = Listener()
    try:
        if provider == "local":
            workdir, env = envs["fixture__ledger-2"]
            result = grading.run_tests(workdir, row, canary_patch(row, "127.0.0.1", listener.port), env)
        elif provider == "env-image":
            request.getfixturevalue("fixture_env_image")
            workdir = tmp_path / "checkout"
            env = instance_env.prepare(row, "image", workdir, repo_cache=envs["fixture__ledger-2"][0].parent)
            result = grading.run_tests(workdir, row, canary_patch(row, "127.0.0.1", listener.port), env)
        else:
            client = request.getfixturevalue("docker_engine")
            image = fixture_image(client, envs["fixture__ledger-2"][0].parent / "ledger")
            try:
                env = instance_env.prepare(row, "image", tmp_path / "unused", image=image)
                result = grading.run_tests(tmp_path / "unused", row, canary_patch(row, "127.0.0.1", listener.port), env)
            finally:
                client.images.remove(image, force=True)
    finally:
        listener.close()
    assert "CANARY-BLOCKED" in result.log, result.log[-3000:]  # the conftest ran, and its connect failed
    assert listener.connections == 0
    assert key not in result.log
    assert "OPENAI_API_KEY" not in result.log
    assert grading.grade(row, result.outcomes, result.status).resolved, result.log[-3000:]


def test_a_grade_gets_its_own_copy_of_the_venv_whatever_the_candidate_writes_there(tmp_path):
    """A candidate's code may write into the venv it runs in (a .pth file runs at every start of Python): in its
    private copy (`suite_env(private_venv=...)`, as every grade gets), the cached venv stays as it was."""

    cached = tmp_path / "cache" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(cached)], check=True)
    (cached / "bin" / "tool").write_text(f"#!{cached}/bin/python\nprint('tool')\n")
    (cached / "pip.conf").write_text(f"[install]\nconstraint = {cached}/dated-constraints.txt\n")  # dated_pins.py
    copy = venv_build.private_copy(cached, tmp_path / "grade" / "venv")
    poison = "import site, sys; open(site.getsitepackages()[0] + '/poison.pth', 'w').write('import os\\n')"
    poison += "; print(sys.prefix)"
    prefix = subprocess.run([copy / "bin" / "python", "-c", poison], capture_output=True, text=True, check=True)
    assert prefix.stdout.strip() == str(copy)  # the copy is a venv of its own, not a link to the cached one
    assert list(copy.glob("lib/python*/site-packages/poison.pth"))
    assert not list(cached.glob("lib/python*/site-packages/poison.pth"))
    assert (copy / "bin" / "tool").read_text().startswith(f"#!{copy}/bin/python\n")
    assert (cached / "bin" / "tool").read_text().startswith(f"#!{cached}/bin/python\n")
    assert (copy / "pip.conf").read_text() == f"[install]\nconstraint = {copy}/dated-constraints.txt\n"


def test_a_failed_install_is_named_in_the_level3_rejection(fixture):
    """scikit-learn 0.22 under Cython 3: the install failed, every test then failed at import, and the rejection
    said only that 93 PASS_TO_PASS tests fail; the install's exit status and last error now come with it."""
    rows, envs = fixture
    workdir, env = envs["fixture__ledger-1"]
    breaking = "python -c \"import shutil; shutil.rmtree('ledger'); raise RuntimeError('no C compiler found')\""
    with pytest.raises(Rejected) as rejected:
        level3_before(workdir, rows["fixture__ledger-1"], env.model_copy(update={"install": breaking}), 600)
    assert rejected.value.reason.endswith(
        "; the instance's install step failed (exit status 1; its last error: 'RuntimeError: no C compiler found')"
    )
    quiet = "python -c \"print('RuntimeError: a message, not a failure')\""
    result, verdict = run(fixture, "fixture__ledger-1", rows["fixture__ledger-1"]["patch"], timeout=600)
    assert verdict.resolved
    assert install_hint(result.log) == ""
    succeeding = grading.run_tests(workdir, rows["fixture__ledger-1"], "", env.model_copy(update={"install": quiet}))
    assert eval_script.INSTALL_FAILED not in succeeding.log
    assert install_hint(succeeding.log) == ""


@pytest.mark.parametrize(
    ("output", "named"),
    [
        # scikit-learn 0.22 under Cython 3 (pip 21): the exception, not pip's "Command errored out" after it
        ("    Cython.Compiler.Errors.CompileError: sklearn/neighbors/_ball_tree.pyx\nERROR: Command errored out with "
         "exit status 1: python -c 'import setuptools' develop --no-deps\n",
         "'Cython.Compiler.Errors.CompileError: sklearn/neighbors/_ball_tree.pyx'"),
        # scikit-learn 1.3 in a venv without wheel (pip 26): setuptools' line, not pip's summary codes
        ("  error: invalid command 'bdist_wheel'\n  error: subprocess-exited-with-error\nerror: "
         "metadata-generation-failed\n", "\"error: invalid command 'bdist_wheel'\""),
        # matplotlib offline: setuptools' line names the download, pip's after it only the package
        ("      error: Failed to download any of the following: ['https://download.savannah.gnu.org/releases/freetype/"
         "freetype-2.6.1.tar.gz']\n  ERROR: Failed building editable for matplotlib\nerror: failed-wheel-build-for-"
         "install\n", "\"error: Failed to download any of the following: ['https://download.savannah.gnu.org/releases/"
         "freetype/freetype-2.6.1.tar.gz']\""),
        ("ERROR: Could not find a version that satisfies the requirement widget==9\n",
         "'ERROR: Could not find a version that satisfies the requirement widget==9'"),
        ("make: *** [all] Killed\n", None),
    ],
)  # fmt: skip
def test_the_install_hint_names_the_errors_cause_where_its_log_shows_one(output, named):
    hint = install_hint(f"{output}{eval_script.INSTALL_FAILED} 2\n")
    last = f"; its last error: {named}" if named else ""
    assert hint == f"; the instance's install step failed (exit status 2{last})"
