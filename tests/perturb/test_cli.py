"""The `repoanchor perturb` contracts: list, apply (metadata outside OUT) and validate exit codes."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.perturb.transforms import REPOMIRAGE_IDS, SPT_IDS, TRANSFORMS

runner = CliRunner()
SRC = "def pick(a, b):\n    if a < b:\n        return a\n    else:\n        return b\n"
TEST = "from pkg.mod import pick\n\n\ndef test_pick():\n    assert pick(1, 2) == 1\n    assert pick(3, 2) == 2\n"


def _project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(SRC)
    (root / "tests").mkdir()
    (root / "tests" / "test_mod.py").write_text(TEST)
    return root


def test_list_json_names_every_transform_with_family_and_description():
    result = runner.invoke(app, ["perturb", "list", "--json"])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert [r["id"] for r in rows] == list(TRANSFORMS)
    assert all(r["description"] for r in rows)
    assert [r["id"] for r in rows if r["family"] == "spt"] == list(SPT_IDS)
    assert [r["id"] for r in rows if r["family"] == "repomirage"] == list(REPOMIRAGE_IDS)
    assert {r["id"] for r in rows if r["keyword_bound"]} == {"dead-string-assign", "dead-method"}


def test_apply_writes_variant_and_metadata_outside_out(tmp_path: Path):
    src = _project(tmp_path / "src")
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["perturb", "apply", str(src), str(out), "-t", "if-else-swap", "--fraction", "1.0", "--seed", "4"]
    )
    assert result.exit_code == 0, result.output
    assert "if not" in (out / "pkg" / "mod.py").read_text()
    meta = json.loads((tmp_path / "out.variant.json").read_text())
    assert meta["seed"] == 4
    assert meta["summary"]["if-else-swap"]["sites_applied"] == 1
    applied = [o for o in meta["outcomes"] if o["kind"] == "applied"]
    assert applied[0]["file"] == "pkg/mod.py"
    assert applied[0]["sites"][0]["before"].startswith("if a < b")
    assert not list(out.rglob("*.json"))


def test_apply_refuses_metadata_inside_out_and_existing_out(tmp_path: Path):
    src = _project(tmp_path / "src")
    inside = runner.invoke(
        app,
        [
            "perturb",
            "apply",
            str(src),
            str(tmp_path / "o"),
            "-t",
            "dead-code",
            "--metadata",
            str(tmp_path / "o" / "m.json"),
        ],
    )
    assert inside.exit_code != 0
    assert not (tmp_path / "o").exists()
    existing = runner.invoke(app, ["perturb", "apply", str(src), str(src), "-t", "dead-code"])
    assert existing.exit_code == 2
    assert "already exists" in existing.output


def test_validate_exit_codes_through_the_console_script(tmp_path: Path):
    src = _project(tmp_path / "src")
    exe = Path(sys.executable).with_name("repoanchor")
    same = tmp_path / "same"
    subprocess.run(
        [str(exe), "perturb", "apply", str(src), str(same), "-t", "if-else-swap", "--fraction", "1"],
        check=True,
        capture_output=True,
    )
    cmd = f"{shlex.quote(sys.executable)} -m pytest -q tests"
    ok = subprocess.run(
        [str(exe), "perturb", "validate", str(src), str(same), "--test-cmd", cmd], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert json.loads(ok.stdout)["n_compared"] == 1
    broken = tmp_path / "broken"
    subprocess.run(["cp", "-r", str(src), str(broken)], check=True)
    (broken / "pkg" / "mod.py").write_text(SRC.replace("return a\n", "return b\n", 1))
    bad = subprocess.run(
        [str(exe), "perturb", "validate", str(src), str(broken), "--test-cmd", cmd], capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["changed"][0]["variant"] == "failed"


def test_tree_transform_options_reach_the_transform(tmp_path: Path):
    src = _project(tmp_path / "src")
    (src / "pkg" / "mod.py").write_text("import os\n\n\ndef home():\n    return os.sep\n")
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "perturb",
            "apply",
            str(src),
            str(out),
            "-t",
            "proxy-imports",
            "--fraction",
            "1",
            "--option",
            "proxy-imports.depth=2",
        ],
    )
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "out.variant.json").read_text())
    chains = [e for e in meta["path_resolution_map"] if e["kind"] == "import_proxy"]
    assert chains
    assert all(len(e["chain"].split(" -> ")) == 2 for e in chains)
    bad = runner.invoke(
        app, ["perturb", "apply", str(src), str(tmp_path / "o2"), "-t", "proxy-imports", "--option", "depth=2"]
    )
    assert bad.exit_code != 0


def test_apply_that_rewrites_nothing_exits_3_and_says_why(tmp_path: Path):
    """dead-method inserts a keyword: with none given, every file is skipped and OUT is a copy of SRC."""
    src = _project(tmp_path / "src")
    out = tmp_path / "out"
    result = runner.invoke(app, ["perturb", "apply", str(src), str(out), "-t", "dead-method", "--fraction", "1.0"])
    assert result.exit_code == 3, result.output
    assert "no site was rewritten" in result.stderr
    assert "dead-method: no keyword" in result.stderr
    assert (out / "pkg" / "mod.py").read_text() == SRC
    assert json.loads(result.stdout)["files_changed"] == 0


SOURCE_CHECK = """from pathlib import Path

from pkg import mod


def test_pick():
    assert mod.pick(1, 2) == 1


def test_the_module_reads_as_written():  # any rewrite of pkg/mod.py changes this test's outcome
    source = next(Path(__file__).parents[1].glob("pkg/m*.py"))  # a pattern: the source_reads guard misses it
    assert source.read_text().startswith("def pick(a, b):\\n    if a < b:")
"""


def test_check_catalogue_lists_each_changed_test_with_the_sites_near_it_and_resumes(tmp_path: Path):
    src = _project(tmp_path / "src")
    (src / "tests" / "test_mod.py").write_text(SOURCE_CHECK)
    out = tmp_path / "out"
    cmd = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider tests"
    args = ["perturb", "check-catalogue", str(src), str(out), "--test-cmd", cmd, "--no-stacks", "--repeat", "1"]
    args += ["-t", "if-else-swap", "-t", "while-unroll"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output  # if-else-swap rewrote pkg/mod.py: the source check fails
    rows = {row["name"]: row for row in json.loads(result.stdout)["rows"]}
    assert (rows["if-else-swap"]["changed"], rows["if-else-swap"]["tests_compared"]) == (1, 2)
    assert (rows["while-unroll"]["sites"], rows["while-unroll"]["changed"]) == (0, 0)  # no loop to unroll
    table = (out / "catalogue.md").read_text()
    assert "`tests.test_mod::test_the_module_reads_as_written` passed → failed" in table
    # the site rewritten in the module the test imports
    assert "pkg/mod.py pick/If#1: `if a < b: …` → `if not (a < b): …`" in table
    untouched = (out / "rows" / "if-else-swap.json").stat().st_mtime_ns
    (out / "rows" / "while-unroll.json").unlink()
    again = runner.invoke(app, args)
    assert again.exit_code == 1
    assert (out / "rows" / "if-else-swap.json").stat().st_mtime_ns == untouched  # read back, not rerun
    assert (out / "rows" / "while-unroll.json").is_file()
    assert (
        json.loads(again.stdout)["rows"] == json.loads(result.stdout)["rows"][:1] + json.loads(again.stdout)["rows"][1:]
    )


def test_check_catalogue_lists_a_change_the_variant_does_not_repeat_as_unconfirmed(tmp_path: Path):
    """zipp's timing test failed once on a busy machine: the row says the change did not come back."""
    src = _project(tmp_path / "src")
    counter = tmp_path / "runs"  # outside the trees: runs 0-1 the baseline, 2 the variant, 3-4 the recheck
    counter.write_text("0")
    timing = f"from pathlib import Path\n\n\ndef test_timing():\n    runs = Path({str(counter)!r})\n"
    timing += "    n = int(runs.read_text())\n    runs.write_text(str(n + 1))\n    assert n != 2\n"
    (src / "tests" / "test_timing.py").write_text(timing)
    out = tmp_path / "out"
    cmd = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider tests"
    args = ["perturb", "check-catalogue", str(src), str(out), "--test-cmd", cmd, "--no-stacks", "-t", "if-else-swap"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output  # not proven equivalent either
    row = json.loads(result.stdout)["rows"][0]
    assert (row["changed"], row["unconfirmed"], row["tests_compared"], counter.read_text()) == (0, 1, 2, "5")
    table = (out / "catalogue.md").read_text()
    assert "`tests.test_timing::test_timing` passed → failed, then passed (unconfirmed)" in table


LINE_NAMED = """import pytest

from pkg import mod


@pytest.mark.parametrize("f", [mod.pick, mod.last], ids=lambda f: f"{f.__name__}:{f.__code__.co_firstlineno}")
def test_named_by_its_line(f):
    assert callable(f)
"""


def test_check_catalogue_says_which_missing_tests_came_back_renumbered(tmp_path: Path):
    """pycodestyle names its self-doctests by each check's first line: a transform that moves lines renames them.
    They stay missing and added (the ids differ), and the row says how many pair up but for their numbers."""
    src = _project(tmp_path / "src")
    five = "".join(f"    x{i} = {i}\n" for i in range(4)) + "    return x3\n"
    (src / "pkg" / "mod.py").write_text(SRC + f"\n\ndef five():\n{five}\n\ndef last(items):\n    return items\n")
    (src / "tests" / "test_lines.py").write_text(LINE_NAMED)
    cmd = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider tests"
    args = ["perturb", "check-catalogue", str(src), str(tmp_path / "out"), "--test-cmd", cmd, "--no-stacks"]
    result = runner.invoke(app, [*args, "--repeat", "1", "-t", "if-true-wrap", "-t", "if-else-swap"])
    assert result.exit_code == 1, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)["rows"]}
    moved = rows["if-true-wrap"]  # five()'s block is wrapped: last() starts a line later
    assert (moved["missing"], moved["added"], moved["renumbered"]) == (1, 1, 1)
    assert moved["missing_tests"] == ["tests.test_lines::test_named_by_its_line[last:16]"]
    assert (rows["if-else-swap"]["missing"], rows["if-else-swap"]["renumbered"]) == (0, 0)  # lines stay
    assert (
        "if-true-wrap**: 1 of the missing ids match added ones but for their numbers"
        in (tmp_path / "out" / "catalogue.md").read_text()
    )


def test_check_catalogue_tells_masking_the_test_command_that_collects_doctests(tmp_path: Path):
    """`--doctest-modules` in the command imports every module by its file: masking must refuse, as a suite's
    build makes it (it had masked, and the variant's collection failed: 'import file mismatch')."""
    src = _project(tmp_path / "src")
    (src / "pkg" / "mod.py").write_text('"""A module.\n\n>>> 1 + 1\n2\n"""\n' + SRC)
    cmd = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} -m pytest -q --doctest-modules pkg tests"
    args = ["perturb", "check-catalogue", str(src), str(tmp_path / "out"), "--test-cmd", cmd, "--no-stacks"]
    result = runner.invoke(app, [*args, "--repeat", "1", "-t", "runtime-target-masking"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["rows"]
    assert (row["sites"], row["files_changed"], row["missing"], row["added"]) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["-t", "runtime-target-masking", "--option", "runtime-target-masking.zzz=1"], "unknown option(s) zzz; known:"),
        (["-t", "for-to-while", "--option", "for-to-while.zzz=1"], "for-to-while: unknown option(s) zzz; it takes no"),
        (["-t", "for-to-while", "--option", "proxy-imports.depth=2"], "options for proxy-imports, which is not among"),
    ],
)
def test_apply_refuses_options_it_would_ignore(tmp_path: Path, options, said):
    src = _project(tmp_path / "src")
    result = runner.invoke(app, ["perturb", "apply", str(src), str(tmp_path / "out"), *options])
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_the_catalogue_table_names_missing_and_added_tests(tmp_path: Path):
    from repoanchor.perturb.validation.catalogue import CatalogueRow, write_tables

    row = CatalogueRow("runtime-target-masking", ["runtime-target-masking"], missing=1, added=3)
    row.missing_tests, row.added_tests = ["tests/test_a.py::test_x"], ["pkg/core_twin.py::pkg.core_twin", "t::b"]
    write_tables(tmp_path, [row])
    table = (tmp_path / "catalogue.md").read_text()
    assert "- **runtime-target-masking**: `tests/test_a.py::test_x` missing from the variant's run" in table
    assert "- **runtime-target-masking**: `pkg/core_twin.py::pkg.core_twin` added to the variant's run" in table
    assert "- **runtime-target-masking**: and 1 more added to the variant's run" in table


@pytest.mark.parametrize(
    ("args", "said"), [(["--test-cmd", "make test"], "put {junit} where"), (["-t", "nope"], "unknown transform 'nope'")]
)
def test_check_catalogue_refuses_a_bad_command_or_transform_before_writing_anything(tmp_path: Path, args, said):
    src, out = _project(tmp_path / "src"), tmp_path / "out"
    given = args if "--test-cmd" in args else ["--test-cmd", "pytest", *args]
    result = runner.invoke(app, ["perturb", "check-catalogue", str(src), str(out), *given])
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert not out.exists()
