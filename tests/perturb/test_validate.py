"""Differential testing with real subprocesses: tiny projects in tmp_path, then real PyPI projects."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from support.projects import EXPECTED_TESTS, PROJECTS
from support.pypi import SdistUnavailable, fetch_sdist
from support.trees import make_tree

from repoanchor.perturb.validation.validate import (
    InfrastructureError,
    junit_command,
    run_baseline,
    run_tests,
    validate,
)

PYTHON = shlex.quote(sys.executable)
# Without the venv's third-party plugins each tiny run starts in ~0.5 s instead of ~2 s.
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {PYTHON} -m pytest -q tests"

MODULE = """\
def double(x):
    return 2 * x


def name():
    return "tiny"
"""

TESTS = """\
from tiny.mod import double, name


def test_double():
    assert double(2) == 4


def test_name():
    assert name() == "tiny"


class TestGroup:
    def test_zero(self):
        assert double(0) == 0
"""


def make_project(root: Path, module: str = MODULE, tests: str = TESTS) -> Path:
    """A package `tiny` with a pytest suite; no __init__ in tests so pytest needs nothing else."""
    (root / "tiny").mkdir(parents=True)
    (root / "tiny" / "__init__.py").write_text("")
    (root / "tiny" / "mod.py").write_text(module)
    (root / "tests").mkdir()
    (root / "tests" / "test_mod.py").write_text(textwrap.dedent(tests))
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes: proves a run wrote nothing into the tree."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def original(tmp_path: Path) -> Path:
    return make_project(tmp_path / "original")


def test_identical_trees_are_ok_and_left_untouched(original: Path, tmp_path: Path):
    variant = make_project(tmp_path / "variant")
    before = snapshot(original), snapshot(variant)
    report = validate(original, variant, PYTEST)
    assert report.ok, report.to_json()
    assert (report.n_tests, report.n_compared, report.changed_files) == (3, 3, 0)
    assert (snapshot(original), snapshot(variant)) == before
    summary = json.loads(report.to_json())
    assert summary["ok"] is True
    assert summary["test_cmd"] == PYTEST
    assert set(summary["durations"]) == {"compile", "baseline", "variant"}


def test_changed_return_value_is_a_change(original: Path, tmp_path: Path):
    variant = make_project(tmp_path / "variant", MODULE.replace("2 * x", "3 * x"))
    report = validate(original, variant, PYTEST)
    assert not report.ok
    assert report.changed == [{"test": "tests.test_mod::test_double", "original": "passed", "variant": "failed"}]
    assert report.changed_files == 1
    assert not report.missing
    assert not report.added
    assert not report.compile_errors


def test_removed_and_added_tests_count_as_changes(original: Path, tmp_path: Path):
    tests = TESTS.replace("def test_name", "def test_renamed")
    report = validate(original, make_project(tmp_path / "variant", tests=tests), PYTEST)
    assert not report.ok
    assert report.missing == ["tests.test_mod::test_name"]
    assert report.added == ["tests.test_mod::test_renamed"]
    assert report.n_compared == 4


def test_flaky_test_is_found_by_repeating_the_baseline_and_excluded(tmp_path: Path):
    counter = tmp_path / "counter"  # outside both trees: the trees stay identical
    counter.write_text("0")
    flaky = f"""
        from pathlib import Path


        def test_alternates():
            counter = Path({str(counter)!r})
            n = int(counter.read_text())
            counter.write_text(str(n + 1))
            assert n % 2 == 0


        def test_stable():
            assert True
    """
    original = make_project(tmp_path / "original", tests=flaky)
    variant = make_project(tmp_path / "variant", tests=flaky)
    report = validate(original, variant, PYTEST, repeat=3)
    assert report.flaky == ["tests.test_mod::test_alternates"]
    assert report.ok, report.to_json()  # the variant's run (count 3) fails it, but it is excluded
    assert (report.n_tests, report.n_compared, report.repeat) == (2, 1, 3)
    assert len(report.durations["baseline"]) == 3
    assert counter.read_text() == "4"


def counted_tests(counter: Path, failing_runs: set[int]) -> str:
    """A suite whose `test_counted` fails in the given runs (numbered from 0 across every tree's runs, in a
    counter outside the trees) and passes in the others; `test_stable` always passes."""
    return f"""
        from pathlib import Path


        def test_counted():
            counter = Path({str(counter)!r})
            n = int(counter.read_text())
            counter.write_text(str(n + 1))
            assert n not in {sorted(failing_runs)!r}


        def test_stable():
            assert True
    """


@pytest.mark.parametrize(
    ("failing_runs", "changed", "unconfirmed", "flaky", "ok"),
    [
        # runs: 0, 1 the baseline; 2 the variant; 3 the original again; 4 the variant again
        pytest.param({2}, 0, 1, [], False, id="the-variant-does-not-repeat-its-change"),
        pytest.param({2, 4}, 1, 0, [], False, id="the-variant-repeats-its-change"),
        pytest.param({2, 3}, 0, 0, ["tests.test_mod::test_counted"], True, id="the-original-varies-too"),
    ],
)
def test_recheck_sorts_a_change_by_one_more_run_of_each_tree(
    tmp_path: Path, failing_runs: set[int], changed: int, unconfirmed: int, flaky: list[str], ok: bool
):
    counter = tmp_path / "counter"
    counter.write_text("0")
    tests = counted_tests(counter, failing_runs)
    original = make_project(tmp_path / "original", tests=tests)
    report = validate(original, make_project(tmp_path / "variant", tests=tests), PYTEST, repeat=2, recheck=True)
    assert counter.read_text() == "5"  # both trees ran once more
    assert (len(report.changed), len(report.unconfirmed), report.flaky, report.ok) == (changed, unconfirmed, flaky, ok)
    assert report.n_compared == 2 - len(flaky)
    if unconfirmed:
        assert report.unconfirmed[0]["variant_again"] == "passed"


def test_without_recheck_a_change_is_what_one_run_saw(tmp_path: Path):
    counter = tmp_path / "counter"
    counter.write_text("0")
    tests = counted_tests(counter, {2})
    original = make_project(tmp_path / "original", tests=tests)
    report = validate(original, make_project(tmp_path / "variant", tests=tests), PYTEST, repeat=2)
    assert counter.read_text() == "3"
    assert report.changed == [{"test": "tests.test_mod::test_counted", "original": "passed", "variant": "failed"}]
    assert not report.unconfirmed


def test_a_test_whose_ids_change_every_run_is_flaky_as_a_whole(tmp_path: Path):
    """marshmallow parametrizes with the time of collection (`test_x[09:27:40 2026-12-06]`): every run, the
    variant's too, has ids no other run had. Repeated baseline runs see them vary; the variant's new ids are flaky,
    not added, and the stable tests are still compared."""
    counter = tmp_path / "counter"
    counter.write_text("0")
    varying = f"""
        from pathlib import Path

        import pytest

        COUNTER = Path({str(counter)!r})
        RUN = int(COUNTER.read_text())
        COUNTER.write_text(str(RUN + 1))


        @pytest.mark.parametrize("stamp", [f"run-{{RUN}}", "fixed"])
        def test_stamped(stamp):
            assert stamp


        def test_stable():
            assert True
    """
    original = make_project(tmp_path / "original", tests=varying)
    variant = make_project(tmp_path / "variant", tests=varying)
    report = validate(original, variant, PYTEST, repeat=2)
    assert report.ok, report.to_json()
    assert (report.added, report.missing) == ([], [])
    assert "tests.test_mod::test_stamped[run-2]" in report.flaky  # the variant's own id
    assert "tests.test_mod::test_stamped[fixed]" in report.flaky  # the whole test is flaky
    assert report.n_compared == 1  # test_stable alone
    broken = make_project(tmp_path / "broken", tests=varying.replace("assert True", "assert False"))
    assert validate(original, broken, PYTEST, repeat=2).changed == [
        {"test": "tests.test_mod::test_stable", "original": "passed", "variant": "failed"}
    ]


def test_a_test_parametrized_over_a_set_of_strings_keeps_its_ids_from_run_to_run(tmp_path: Path):
    """isodate's `TEST_CASES` is a set of tuples of strings: pytest numbers such parameters in the set's iteration
    order, which a random hash seed changes every run, so each run had other ids and 148 of 280 tests were flaky."""
    by_set = """
        from datetime import date

        import pytest

        WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta")
        CASES = {(word, len(word), date(2000, 1, len(word))) for word in WORDS}  # a date's id is its index


        @pytest.mark.parametrize("word,size,day", CASES)
        def test_size(word, size, day):
            assert len(word) == size
    """
    original = make_project(tmp_path / "original", tests=by_set)
    variant = make_project(tmp_path / "variant", tests=by_set)
    report = validate(original, variant, PYTEST, repeat=3)
    assert report.ok, report.to_json()
    assert report.flaky == []
    assert report.n_compared == 7


def test_syntax_error_in_changed_file_is_a_compile_error(original: Path, tmp_path: Path):
    variant = make_project(tmp_path / "variant", MODULE.replace("return 2 * x", "return 2 *"))
    (variant / "notes.txt").write_text("not python, never compiled")
    report = validate(original, variant, PYTEST)
    assert not report.ok
    assert list(report.compile_errors) == ["tiny/mod.py"]
    assert report.compile_errors["tiny/mod.py"].startswith("SyntaxError")
    assert report.changed_files == 2
    assert "baseline" not in report.durations  # level 1 rejected it; the suite was not run


def test_pycache_and_git_are_not_compared(original: Path, tmp_path: Path):
    variant = make_project(tmp_path / "variant")
    for junk in ("__pycache__/mod.cpython-311.pyc", ".git/HEAD", "tiny/__pycache__/x.py"):
        (variant / junk).parent.mkdir(parents=True, exist_ok=True)
        (variant / junk).write_text("def broken(:\n")
    report = validate(original, variant, PYTEST)
    assert report.ok, report.to_json()
    assert report.changed_files == 0


def test_no_junit_is_an_infrastructure_error(original: Path, tmp_path: Path):
    with pytest.raises(InfrastructureError, match="no junit XML"):
        run_tests(original, "true {junit}", timeout=60)
    report = validate(original, make_project(tmp_path / "variant"), "true {junit}")
    assert not report.ok
    assert "no junit XML" in report.infra_error
    assert report.n_compared == 0


def test_a_suite_that_runs_no_tests_proves_nothing(original: Path, tmp_path: Path):
    report = validate(original, make_project(tmp_path / "variant"), f"{PYTEST} -k nothing_matches")
    assert not report.ok
    assert "ran no tests" in report.infra_error


def test_a_suite_stopped_by_a_collection_error_proves_nothing(original: Path, tmp_path: Path):
    """pytest reports a module it cannot import as one errored test and runs nothing: a variant with the same
    error would compare "unchanged" on every test, so the baseline itself is refused, naming the module."""
    broken = make_project(tmp_path / "broken")
    (broken / "tests" / "test_needs_plugin.py").write_text("import not_installed_anywhere\n")
    with pytest.raises(InfrastructureError, match=r"ran no test to its end: its 1 outcome\(s\) are all errors"):
        run_baseline(broken, PYTEST)
    report = validate(broken, make_project(tmp_path / "variant"), PYTEST)
    assert not report.ok
    assert "not_installed_anywhere" in report.infra_error
    assert run_baseline(original, PYTEST).runs[0].outcomes  # the same project without that module runs


def test_non_pytest_command_without_junit_placeholder_is_rejected(original: Path):
    with pytest.raises(ValueError, match=r"\{junit\}"):
        run_tests(original, "make test", timeout=60)
    with pytest.raises(ValueError, match=r"\{junit\}"):
        validate(original, original, "pytest tests; echo done")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -x", "pytest -x --junitxml=/j.xml -p no:cacheprovider"),
        ("python -m pytest tests", "python -m pytest tests --junitxml=/j.xml -p no:cacheprovider"),
        ("cd src && /venv/bin/py.test", "cd src && /venv/bin/py.test --junitxml=/j.xml -p no:cacheprovider"),
        ("tox -- --junitxml={junit}", "tox -- --junitxml=/j.xml"),
        ('pytest -q -k "a or b"', 'pytest -q -k "a or b" --junitxml=/j.xml -p no:cacheprovider'),
        ("python -m pytest -q\n", "python -m pytest -q --junitxml=/j.xml -p no:cacheprovider"),  # a YAML block's
    ],
)
def test_junit_path_placement(command: str, expected: str):
    assert junit_command(command, Path("/j.xml")) == expected


@pytest.mark.parametrize(
    "command",
    [
        "(cd tests && python -m pytest -q)",  # the options would follow the subshell's `)`
        "sh -c 'python -m pytest -q'",  # they would be sh's positional arguments
        "python -m pytest -q  # run the tests",  # the comment would swallow them
        "python -m pytest -q &",  # they would run as a command of their own
    ],
)
def test_junit_options_are_never_appended_where_the_shell_would_misplace_them(command: str):
    with pytest.raises(ValueError, match=r"put \{junit\} where the runner expects"):
        junit_command(command, Path("/j.xml"))


def test_junit_with_several_and_nested_suites(original: Path, tmp_path: Path):
    """Other runners nest suites; pytest repeats a test id for teardown errors: worst outcome wins."""
    xml = tmp_path / "report.xml"
    xml.write_text(
        """<?xml version="1.0"?>
        <testsuites>
          <testsuite name="a">
            <testcase classname="a.T" name="ok"/>
            <testcase classname="a.T" name="td"/>
            <testcase classname="a.T" name="td"><error message="teardown"/></testcase>
            <testsuite name="inner">
              <testcase classname="a.inner" name="bad"><failure message="no"/></testcase>
              <testcase classname="a.inner" name="skip"><skipped/></testcase>
            </testsuite>
          </testsuite>
          <testsuite name="b"><testcase name="bare"/></testsuite>
        </testsuites>"""
    )
    run = run_tests(original, f"cp {shlex.quote(str(xml))} {{junit}}", timeout=60)
    assert run.outcomes == {
        "a.T::ok": "passed",
        "a.T::td": "error",
        "a.inner::bad": "failed",
        "a.inner::skip": "skipped",
        "bare": "passed",
    }
    assert run.exit_code == 0


def test_truncated_junit_is_an_infrastructure_error(original: Path):
    with pytest.raises(InfrastructureError, match="unreadable junit XML"):
        run_tests(original, "printf '<testsuites><testcase' > {junit}", timeout=60)


WRITES_BESIDE_ITSELF = """
    from pathlib import Path


    def test_saves_a_file_in_the_working_directory():
        saved = Path("saved.txt")
        assert not saved.exists()
        saved.write_text("x")
"""


def test_a_test_writing_into_its_tree_runs_alike_and_leaves_the_trees_alone(tmp_path: Path):
    """Each run is made in a fresh copy: a test saving a file beside itself finds none from an earlier run (the
    baseline's second run would call it flaky) and the variant, copied from a tree a run had written into, would
    fail it as a change."""
    original = make_project(tmp_path / "original", tests=WRITES_BESIDE_ITSELF)
    variant = make_project(tmp_path / "variant", tests=WRITES_BESIDE_ITSELF)
    before = snapshot(original), snapshot(variant)
    report = validate(original, variant, PYTEST, repeat=2)
    assert report.ok, report.to_json()
    assert not report.flaky
    assert report.n_compared == 1
    assert (snapshot(original), snapshot(variant)) == before


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a tree away")
def test_an_original_owned_by_another_user_runs_as_the_variant_does(tmp_path: Path):
    """A checkout owned by another account (a bind mount, a shared cache): where the network namespace maps the
    runner alone, root may not write into it, while it may into the variant it made. Both run in copies."""
    original = make_project(tmp_path / "original", tests=WRITES_BESIDE_ITSELF)
    variant = make_project(tmp_path / "variant", tests=WRITES_BESIDE_ITSELF)
    for path in [original, *original.rglob("*")]:
        os.chown(path, 65534, 65534)
    report = validate(original, variant, PYTEST)
    assert report.ok, report.to_json()
    assert report.n_compared == 1


def test_timeout_kills_the_whole_command(original: Path):
    start = time.monotonic()
    with pytest.raises(InfrastructureError, match="timed out after 1s"):
        run_tests(original, "sleep 30 & sleep 30; echo {junit}", timeout=1)
    # well under the 30 s the command takes unkilled; the rest is margin for a loaded machine
    assert time.monotonic() - start < 25


def test_tree_code_shadows_pythonpath(original: Path, tmp_path: Path):
    """Another copy on PYTHONPATH (an installed or original tree) must not be what gets tested."""
    other = make_project(tmp_path / "other", MODULE.replace("2 * x", "3 * x"))
    run = run_tests(original, PYTEST, timeout=120, env_extra={"PYTHONPATH": str(other)})
    assert set(run.outcomes.values()) == {"passed"}
    run = run_tests(other, PYTEST, timeout=120, env_extra={"PYTHONPATH": str(original)})
    assert run.outcomes["tests.test_mod::test_double"] == "failed"


def test_a_test_parametrized_by_its_checkouts_path_is_one_test_in_every_checkout():
    """requests-6028: `test_unzipped_paths_unchanged[<abs path of tests/test_utils.py>]`; compared across two
    checkouts, the raw ids differ and the test reads "missing" in the second. Short paths under /tmp: pytest 9
    falls back to `path0` for an id over ~100 characters."""
    body = "import os\nimport pytest\n\n\n@pytest.mark.parametrize('path', [os.path.abspath(__file__)])\n"
    body += "def test_path(path):\n    assert os.path.isfile(path)\n"
    with tempfile.TemporaryDirectory(prefix="ra-", dir="/tmp") as tmp:
        first = make_tree(Path(tmp) / "one", {"tests/test_paths.py": body})
        second = shutil.copytree(first, Path(tmp) / "two" / "deeper")
        ids = [set(run_tests(tree, PYTEST, timeout=120).outcomes) for tree in (first, second)]
    assert ids[0] == ids[1] == {"tests.test_paths::test_path[<tree>/tests/test_paths.py]"}


def test_src_layout_is_importable(tmp_path: Path):
    tree = make_project(tmp_path / "tree")
    (tree / "src").mkdir()
    shutil.move(tree / "tiny", tree / "src" / "tiny")
    run = run_tests(tree, PYTEST, timeout=120)
    assert set(run.outcomes.values()) == {"passed"}


def test_baseline_is_reusable_across_variants(original: Path, tmp_path: Path):
    baseline = run_baseline(original, PYTEST, repeat=2)
    good = validate(original, make_project(tmp_path / "good"), PYTEST, baseline=baseline)
    bad = validate(original, make_project(tmp_path / "bad", MODULE.replace('"tiny"', '"x"')), PYTEST, baseline=baseline)
    assert good.ok
    assert not bad.ok
    assert good.repeat == 2
    with pytest.raises(ValueError, match="baseline was run with"):
        validate(original, original, f"{PYTEST} -x", baseline=baseline)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_real_project_copy_is_equivalent(name: str, tmp_path: Path):
    version, test_cmd = PROJECTS[name]
    tree = fetch_sdist(name, version)
    copy = Path(shutil.copytree(tree, tmp_path / "copy"))
    before = snapshot(tree)
    report = validate(tree, copy, test_cmd, repeat=2)
    assert report.ok, report.to_json()
    assert report.n_compared >= 0.9 * EXPECTED_TESTS[name]
    assert report.flaky == []
    assert snapshot(tree) == before


@pytest.mark.slow
def test_real_project_behaviour_change_is_caught(tmp_path: Path):
    version, test_cmd = PROJECTS["more-itertools"]
    tree = fetch_sdist("more-itertools", version)
    test_cmd = test_cmd.replace(" tests", " tests/test_recipes.py")  # where `take` is tested; fast
    variant = Path(shutil.copytree(tree, tmp_path / "variant"))
    recipes = variant / "more_itertools" / "recipes.py"
    source = recipes.read_text()
    assert "def take(n, iterable):" in source
    # A later definition rebinds the name: `take` now drops the first item.
    recipes.write_text(source + "\n\ndef take(n, iterable):\n    return list(islice(iterable, 1, n + 1))\n")
    report = validate(tree, variant, test_cmd)
    assert not report.ok
    assert report.changed_files == 1
    assert not report.compile_errors
    assert any(c["test"].startswith("tests.test_recipes.TakeTests") for c in report.changed), report.to_json()


def test_tree_inside_a_configured_project_keeps_its_own_test_ids(tmp_path: Path):
    """pytest would adopt the host's ini (rootdir, addopts) and conftest; the tree must not."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "pytest.ini").write_text("[pytest]\naddopts = -k test_name\n")
    (host / "conftest.py").write_text("raise RuntimeError('the host conftest must not be loaded')\n")
    original = make_project(host / "original")
    (original / "pyproject.toml").write_text("[project]\nname = 'tiny'\n")  # no pytest section
    report = validate(original, make_project(tmp_path / "variant"), PYTEST)
    assert report.ok, report.to_json()
    assert report.n_compared == 3


def test_offline_fetch_of_an_uncached_project_skips_with_a_reason(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("REPOANCHOR_OFFLINE", "1")
    with pytest.raises(pytest.skip.Exception, match="REPOANCHOR_OFFLINE=1"):
        fetch_sdist("toolz", "0.0.1.dev0")


@pytest.mark.slow
def test_failed_download_is_an_error_not_a_skip(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("REPOANCHOR_OFFLINE", raising=False)
    with pytest.raises(SdistUnavailable, match="REPOANCHOR_OFFLINE=1"):
        fetch_sdist("toolz", "0.0.1.dev0")  # no such release


def test_a_run_that_fails_is_named_by_its_tree_not_by_the_scratch_copy(original: Path):
    from repoanchor.perturb.validation.validate import run_copied

    with pytest.raises(InfrastructureError) as failed:
        run_copied(original, f"{PYTEST} --no-such-option", timeout=120)  # no junit XML written
    assert str(failed.value).startswith(f"{original.resolve()} (run in a fresh copy): ")
