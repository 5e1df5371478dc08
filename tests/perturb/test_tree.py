"""Whole-tree application: bad input is skipped with a reason, nothing outside OUT is written,
and the same seed gives byte-identical output while different seeds differ."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repoanchor.perturb.metadata import variant_metadata, write_metadata
from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.source.files import is_test_file
from repoanchor.perturb.transforms import SPT_IDS
from repoanchor.perturb.tree import ApplyConfig, apply_tree

GOOD = "def f(a, b):\n    if a < b:\n        return a\n    else:\n        return b\n"


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, files in os.walk(root, followlinks=False):
        for name in files:
            path = Path(dirpath) / name
            out[path.relative_to(root).as_posix()] = (
                str(path.readlink()).encode() if path.is_symlink() else path.read_bytes()
            )
    return out


@pytest.fixture
def bad_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    pkg = src / "pkg"
    pkg.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text(GOOD)
    (pkg / "__init__.py").write_text("")
    (pkg / "good.py").write_text(GOOD)
    (pkg / "broken.py").write_text("def f(:\n    pass\n")
    (pkg / "py2.py").write_text('print "hello"\nexec "x = 1"\n')
    (pkg / "latin.py").write_bytes(b"s = '\xe9t\xe9'\nif s < 'z':\n    pass\n")
    (pkg / "nul.py").write_bytes(b"x = 1\x00\n")
    lines = [f"def f{i}(a, b):\n    return a if a < b else b\n" for i in range(110_000)]
    (pkg / "huge.py").write_text("".join(lines))
    (pkg / "inner_link.py").symlink_to("good.py")
    (pkg / "outer_link.py").symlink_to(outside / "evil.py")
    (src / "outer_dir").symlink_to(outside, target_is_directory=True)
    (src / "tests").mkdir()
    (src / "tests" / "test_good.py").write_text(GOOD)
    return src


def test_bad_input_is_skipped_with_reasons_and_nothing_outside_out_is_written(bad_tree: Path, tmp_path: Path):
    before = _snapshot(tmp_path)
    assert (bad_tree / "pkg" / "huge.py").stat().st_size > 5_000_000
    config = ApplyConfig(list(SPT_IDS), fraction=1.0, keywords=["frobnicate"], seed=3)
    report = apply_tree(bad_tree, tmp_path / "out", config)
    after = _snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("out/")} == before
    reasons = {(o.file, o.reason.split(":")[0]) for o in report.outcomes if isinstance(o, Skipped)}
    for file, reason in [
        ("pkg/broken.py", "unparseable"),
        ("pkg/py2.py", "unparseable"),
        ("pkg/latin.py", "undecodable"),
        ("pkg/nul.py", "binary"),
        ("pkg/huge.py", "too large"),
        ("pkg/__init__.py", "empty"),
    ]:
        assert (file, reason) in reasons
    file_skips = {s.file: s.reason for s in report.file_skips}
    assert file_skips["pkg/outer_link.py"].startswith("symlink: points outside the tree")
    assert file_skips["pkg/inner_link.py"].startswith("symlink: copied as a link")
    assert file_skips["outer_dir"].startswith("symlink: points outside the tree")
    assert file_skips["tests/test_good.py"].startswith("test file")
    assert report.changed_files == ["pkg/good.py"]
    assert (tmp_path / "out" / "pkg" / "outer_link.py").is_symlink()
    assert (tmp_path / "out" / "tests" / "test_good.py").read_text() == GOOD
    assert any(isinstance(o, Applied) and o.file == "pkg/good.py" for o in report.outcomes)


def test_output_must_not_exist_and_must_not_be_inside_source(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text(GOOD)
    with pytest.raises(ValueError, match="already exists"):
        apply_tree(src, src, ApplyConfig(["comparison-swap"]))
    with pytest.raises(ValueError, match="inside the source tree"):
        apply_tree(src, src / "variant", ApplyConfig(["comparison-swap"]))
    with pytest.raises(ValueError, match="unknown transform"):
        apply_tree(src, tmp_path / "v", ApplyConfig(["no-such-transform"]))
    assert not (tmp_path / "v").exists()


def _variant(src: Path, out: Path, seed: int) -> tuple[dict[str, bytes], bytes]:
    config = ApplyConfig(list(SPT_IDS), fraction=0.7, file_fraction=0.8, keywords=["compose", "pipe"], seed=seed)
    report = apply_tree(src, out, config)
    meta_path = out.with_name(out.name + ".json")
    write_metadata(meta_path, variant_metadata(src, config, report))
    return _snapshot(out), meta_path.read_bytes()


def test_same_seed_is_byte_identical_and_different_seeds_differ(toolz_tree: Path, tmp_path: Path):
    tree_a, meta_a = _variant(toolz_tree, tmp_path / "a", seed=11)
    tree_b, meta_b = _variant(toolz_tree, tmp_path / "b", seed=11)
    tree_c, meta_c = _variant(toolz_tree, tmp_path / "c", seed=12)
    assert tree_a == tree_b
    assert meta_a == meta_b
    assert tree_a != tree_c
    assert meta_a != meta_c
    assert json.loads(meta_a)["summary"]


def test_dead_method_leaves_alone_a_class_a_test_walks(tmp_path: Path):
    """A test that lists every attribute of a class (here `vars(Shape)`) would see the new method: the project's
    enumeration index, tests included, keeps dead-method off that class and its subclasses."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "shapes.py").write_text(
        "class Shape:\n    sides = 0\n\n\nclass Square(Shape):\n    sides = 4\n\n\nclass Label:\n    text = ''\n"
    )
    (src / "tests" / "test_shapes.py").write_text(
        "from pkg.shapes import Shape\n\n\ndef test_only_sides():\n"
        "    assert [n for n in vars(Shape) if not n.startswith('_')] == ['sides']\n"
    )
    report = apply_tree(src, tmp_path / "out", ApplyConfig(["dead-method"], fraction=1.0, keywords=["outline"]))
    skipped = [o.reason for o in report.outcomes if isinstance(o, Skipped) and o.file == "pkg/shapes.py"]
    assert sum("enumerated: the members of Shape are listed" in reason for reason in skipped) == 2  # Shape, Square
    changed = (tmp_path / "out" / "pkg" / "shapes.py").read_text()
    assert changed.count("def outline(") == 1  # Label only
    assert changed.index("def outline(") > changed.index("class Label")


def test_a_file_listing_its_own_class_is_refused_through_the_project_index(tmp_path: Path):
    """In a tree the index holds every file's listings, so a pass does not read its file for them again."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "registry.py").write_text(
        "class Registry:\n    x = 1\n\n\nNAMES = sorted(vars(Registry))\n\n\nclass Plain:\n    v = 5\n"
    )
    report = apply_tree(src, tmp_path / "out", ApplyConfig(["dead-method"], fraction=1.0, keywords=["outline"]))
    assert report.project.indexed
    assert "Registry" in report.project.enumerated
    skipped = [o.reason for o in report.outcomes if isinstance(o, Skipped)]
    assert any("enumerated: the members of Registry are listed" in reason for reason in skipped)
    changed = (tmp_path / "out" / "pkg" / "registry.py").read_text()
    assert changed.count("def outline(") == 1
    assert changed.index("def outline(") > changed.index("class Plain")


def test_a_deeply_nested_file_still_counts_in_the_enumeration_index(tmp_path: Path):
    """A 1,000-term expression is too deep for `ast` at Python's default recursion limit; the class index
    must read it anyway (on the engine's big stack), or its `dir(Shape)` is missed. Run in a fresh
    interpreter: this process's recursion limit may have been raised by earlier tests."""
    import subprocess
    import sys

    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "shapes.py").write_text("class Shape:\n    sides = 0\n")
    (src / "pkg" / "listing.py").write_text("members = " + " + ".join(["dir(Shape)"] * 1000) + "\n")
    script = (
        "import sys; from pathlib import Path\n"
        "from repoanchor.perturb.tree import ApplyConfig, apply_tree\n"
        "report = apply_tree(Path(sys.argv[1]), Path(sys.argv[2]), ApplyConfig(['dead-method'], fraction=1.0, "
        "keywords=['outline'], check_interpreters=False))\n"
        "print(sorted(report.project.enumerated))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(src), str(tmp_path / "out")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Shape" in done.stdout
    assert "def outline(" not in (tmp_path / "out" / "pkg" / "shapes.py").read_text()


@pytest.mark.parametrize(
    ("rel", "test"),
    [
        ("tests.py", True),  # jsonpatch: a single-module project's tests beside its module
        ("app/tests.py", True),  # a Django app's
        ("test.py", True),
        ("pkg/api_tests.py", True),
        ("tests/helpers.py", True),
        ("beartype_test/a00_unit/data/data_type.py", True),  # a test tree's data module
        ("Lib/idlelib/idle_test/mock_idle.py", True),
        ("unit_tests/helpers.py", True),
        ("src/trio/_core/_tests/tutil.py", True),
        ("yapftests/utils.py", True),
        ("src/testsuite/support.py", True),
        ("pkg/testsuite.py", False),
        ("pkg/contest/mod.py", False),
        ("pkg/contest.py", False),
        ("jsonpatch.py", False),
    ],
)
def test_test_files_by_name(rel: str, test: bool):
    assert is_test_file(rel) is test


def test_worker_processes_judge_with_the_whole_projects_class_index(tmp_path: Path):
    """The pool's workers get the tree's ProjectInfo once each (not with every batch of jobs): dead-method there
    knows a base defined in another module, and refuses a class whose base a third module enumerates, exactly as
    one process does."""
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "shapes.py").write_text("class Shape:\n    def get(self):\n        return 1\n")
    (pkg / "listed.py").write_text("class Listed:\n    def put(self):\n        return 2\n")
    (pkg / "walker.py").write_text("from pkg.listed import Listed\n\n\ndef names():\n    return dir(Listed)\n")
    for index in range(6):
        body = f"class Child{index}(Shape):\n    def go(self):\n        return {index}\n\n\n"
        body += f"class Other{index}(Listed):\n    def go(self):\n        return {index}\n"
        (pkg / f"mod{index}.py").write_text(f"from pkg.shapes import Shape\nfrom pkg.listed import Listed\n\n\n{body}")
    config = {"transforms": ["dead-method"], "fraction": 1.0, "seed": 3}
    config["transform_keywords"] = {"dead-method": ["probe"]}
    reports = {w: apply_tree(tmp_path / "src", tmp_path / f"out{w}", ApplyConfig(**config, workers=w)) for w in (1, 2)}
    assert _snapshot(tmp_path / "out1") == _snapshot(tmp_path / "out2")
    assert reports[1].outcomes == reports[2].outcomes
    child = (tmp_path / "out2" / "pkg" / "mod0.py").read_text()
    assert child.count("def probe") == 1, child  # Child0 (its base known from the index), not Other0
    reasons = {o.reason for o in reports[2].outcomes if isinstance(o, Skipped) and o.where.startswith("Other")}
    assert any(reason.startswith("enumerated: the members of Listed") for reason in reasons), reasons
