"""The families' test command for any dataset row: pytest node ids run as pytest files with junit XML;
Django's and SymPy's ids run as swebench's spec command on the test patch's present files, read by
swebench's log parser (real swebench specs and parsers, real subprocesses, a real Extend build)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from repoanchor.evals.demo.fixture_project import DATASET_PATH, materialize_fixture
from repoanchor.evals.harness.container_run import IMAGE_PYTHON
from repoanchor.evals.suites.extend import FamiliesConfig, build_extend_tasks, validate_extend
from repoanchor.evals.suites.extend.base import apply_edit
from repoanchor.evals.suites.extend.common import ExtendError, clone, read_json
from repoanchor.evals.suites.extend.project_tests import (
    PYTEST_TEST_CMD,
    log_reader,
    run_project_tests,
    suite_test_settings,
)
from repoanchor.evals.suites.extend.project_tests import test_command as resolve
from repoanchor.perturb.metadata import variant_metadata
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.testrun import run_tests
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.env_images import fixture_env_image_fixture  # noqa: F401


def _diff(*files: str) -> str:
    return "".join(f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-x\n+y\n" for f in files)


DJANGO = {
    "instance_id": "django__django-1",
    "repo": "django/django",
    "version": "4.0",
    "FAIL_TO_PASS": json.dumps(["test_new (str.tests.SimpleTests)"]),
    "PASS_TO_PASS": json.dumps(["test_defaults (str.tests.SimpleTests)"]),
    "test_patch": _diff("tests/str/tests.py", "tests/new_app/tests.py", "tests/str/models.py"),
}
SYMPY = {
    "instance_id": "sympy__sympy-1",
    "repo": "sympy/sympy",
    "version": "1.12",
    "FAIL_TO_PASS": '["test_point3D"]',
    "PASS_TO_PASS": "[]",
    "test_patch": _diff("sympy/geometry/tests/test_point.py"),
}


def _tree(tmp_path: Path, *files: str) -> Path:
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    return tmp_path


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"PASS_TO_PASS": '["tests/test_a.py::test_x"]'}, {"test_cmd": PYTEST_TEST_CMD, "test_log_parser": None}),
        (
            DJANGO,
            {
                "test_cmd": "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {directives}",
                "test_log_parser": "parse_log_django",
            },
        ),
        (
            {**DJANGO, "version": "3.0"},
            {
                "test_cmd": "export LANG=en_US.UTF-8\n"
                "export LANGUAGE=en_US:en\nexport LC_ALL=en_US.UTF-8\n"
                "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {directives}",
                "test_log_parser": "parse_log_django",
            },
        ),
        (
            SYMPY,
            {
                "test_cmd": "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' "
                "bin/test -C --verbose {directives}",
                "test_log_parser": "parse_log_sympy",
            },
        ),
    ],
    ids=["pytest-ids", "django-4.0", "django-3.0-exports", "sympy"],
)
def test_suite_test_settings_follow_the_rows_ids(row, expected):
    assert suite_test_settings(row) == expected


def test_bare_ids_without_a_swebench_spec_name_the_way_out():
    row = {**DJANGO, "repo": "acme/widgets", "instance_id": "acme__widgets-1"}
    with pytest.raises(ExtendError, match=r"not pytest node ids .*'acme/widgets'.*test_log_parser"):
        suite_test_settings(row)


def test_directives_name_only_the_test_patch_files_present(tmp_path):
    tree = _tree(tmp_path, "tests/str/tests.py", "tests/str/models.py")
    template = suite_test_settings(DJANGO)["test_cmd"]
    command = resolve(template, "/v env/bin/python", DJANGO, tree)
    # tests/new_app/tests.py is added by the test patch: not in the tree, so not a directive.
    assert command.endswith("--parallel 1 str.tests str.models")
    with pytest.raises(ExtendError, match="its test patch name none in the tree"):
        resolve(template, "py", DJANGO, _tree(tmp_path / "empty"))
    sympy = resolve(suite_test_settings(SYMPY)["test_cmd"], "py", SYMPY, _tree(tmp_path / "s", *_files(SYMPY)))
    assert sympy.endswith("bin/test -C --verbose sympy/geometry/tests/test_point.py")


def _files(row: dict) -> list[str]:
    return [line.split(" b/")[1] for line in row["test_patch"].splitlines() if line.startswith("diff --git")]


def test_pytest_placeholder_keeps_present_files(tmp_path):
    tree = _tree(tmp_path, "tests/test_a.py")
    row = {"PASS_TO_PASS": '["tests/test_a.py::test_x", "tests/test_gone.py::test_y"]', "FAIL_TO_PASS": []}
    assert resolve("{python} -m pytest {tests}", "/py thon", row, tree) == "'/py thon' -m pytest tests/test_a.py"
    with pytest.raises(ExtendError, match="ids name none in the tree"):
        resolve("pytest {tests}", "py", {"PASS_TO_PASS": []}, tree)


RUNNER = (
    "import sys\n"
    "print('test_a (app.tests.T) ... ok', file=sys.stderr)\n"
    "print('test_b (app.tests.T) ... FAIL', file=sys.stderr)\n"
    "print('test_c (app.tests.T) ... skipped \\'no db\\'')\n"
)
DJANGO_OUTCOMES = {
    "test_a (app.tests.T)": "passed",
    "test_b (app.tests.T)": "failed",
    "test_c (app.tests.T)": "skipped",
}


def test_log_reader_reads_standard_error_too(tmp_path):
    """Django's runner writes its verdicts on standard error: both streams reach the parser."""
    (tmp_path / "runner.py").write_text(RUNNER)
    run = run_tests(tmp_path, f"{sys.executable} runner.py", timeout=60, read_log=log_reader("parse_log_django"))
    assert run.outcomes == DJANGO_OUTCOMES


def test_a_bare_python_in_the_test_command_is_the_variants(tmp_path):
    """`./tests/runtests.py` and `bin/test` start `python` from PATH: on the host, the variant's Python comes first."""
    verdict = "print('test_a (app.tests.T) ... ' + ('ok' if ok else 'FAIL'))"
    script = f"import sys\nok = sys.prefix == {sys.prefix!r}\n{verdict}\n"
    (tmp_path / "runner.py").write_text(script)
    settings = FamiliesConfig(python=sys.executable, test_log_parser="parse_log_django")
    assert run_project_tests(tmp_path, "python runner.py", settings) == {"test_a (app.tests.T)": "passed"}


def test_log_reader_in_the_environment_image(tmp_path, fixture_env_image):
    """The same run in a network-less container of an environment image, read back the same way."""
    (tmp_path / "runner.py").write_text(RUNNER)
    settings = FamiliesConfig(python=IMAGE_PYTHON, image=fixture_env_image, test_log_parser="parse_log_django")
    assert run_project_tests(tmp_path, f"{IMAGE_PYTHON} runner.py", settings) == DJANGO_OUTCOMES


ROWS = {row["instance_id"]: row for row in map(json.loads, DATASET_PATH.read_text().splitlines())}


def test_families_built_and_validated_through_a_log_parser(tmp_path):
    """A real variant's proxy_chain task with outcomes read by swebench's pytest parser instead of junit."""
    project, _ = materialize_fixture(tmp_path / "fixture")
    variant = tmp_path / "variant"
    config = ApplyConfig(["proxy-imports"], fraction=1.0, seed=1, workers=1, check_interpreters=False)
    metadata = variant_metadata(project, config, apply_tree(project, variant, config))
    families = FamiliesConfig(
        families=["proxy_chain"],
        test_cmd="{python} -m pytest -rA -p no:cacheprovider",
        test_log_parser="parse_log_pytest",
        test_env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    (task,) = build_extend_tasks(
        variant, metadata, ROWS["fixture__ledger-1"], tmp_path / "out", families_config=families, seed=3
    )
    assert task.status == "ok", task.reason
    assert task.self_check.status == "passed"
    assert task.validator.test_log_parser == "parse_log_pytest"
    gt = read_json(Path(task.ground_truth))
    assert any(test.startswith("tests/") and "::" in test for test in gt["baseline_passed"])
    for name in ("solved", "untouched"):
        clone(Path(task.repo), tmp_path / name)
    apply_edit(tmp_path / "solved", gt["solution"])
    assert validate_extend(task, tmp_path / "solved").passed
    assert not validate_extend(task, tmp_path / "untouched").passed
