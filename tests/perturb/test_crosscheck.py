"""Changed files are compiled under the oldest supported Python installed here: a file whose
syntax that interpreter rejects is restored from the source and its passes become Failed. Where that
interpreter is installed the passes leave the oldest grammar to it, and a file it rejects is replayed with
the grammar checked after each pass: only the pass that brought the syntax in is rolled back."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.compile_check import CURRENT, installed_interpreters
from repoanchor.perturb.validation.crosscheck import NEWEST_CHECKED, passes_check

# A PEP 614 decorator (any expression, Python 3.9+) parses under 3.11 with feature_version=(3, 8),
# but Python 3.8 itself rejects it: only running the old interpreter catches this.
NEW_SYNTAX = "@hooks[0].register\ndef f(a, b):\n    return a if a < 0 else b\n"
PLAIN = "def g(a, b):\n    return a if a < 0 else b\n"
NEEDS_38_FIRST = pytest.mark.skipif(not installed_interpreters([(3, 8)]), reason="needs a working python3.8 (pyenv)")


@NEEDS_38_FIRST
def test_file_rejected_by_the_oldest_interpreter_is_rolled_back(tmp_path: Path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "setup.cfg").write_text("[options]\npython_requires = >=3.8\n")
    (src / "pkg" / "new.py").write_text(NEW_SYNTAX)
    (src / "pkg" / "plain.py").write_text(PLAIN)
    report = apply_tree(src, tmp_path / "out", ApplyConfig(["comparison-swap"], fraction=1.0))
    assert (tmp_path / "out" / "pkg" / "new.py").read_text() == NEW_SYNTAX
    assert report.changed_files == ["pkg/plain.py"]
    failed = [o for o in report.outcomes if isinstance(o, Failed)]
    assert [o.file for o in failed] == ["pkg/new.py"]
    assert "does not compile under Python 3.8" in failed[0].error
    assert any(isinstance(o, Applied) and o.file == "pkg/plain.py" for o in report.outcomes)
    assert "3.8" in report.interpreter_checks


WITHS = "def h(a, b):\n    with open(a) as f, open(b) as g:\n        return f.read() if 0 < b else g.read()\n"
PARENTHESIZE = "tests.perturb.broken_transforms.ParenthesizeWith"
NEEDS_38 = pytest.mark.skipif(not installed_interpreters([(3, 8)]), reason="needs a working python3.8 (pyenv)")


@pytest.mark.parametrize(
    ("broken", "check", "kept"),
    [
        ("ParenthesizeWith", "current", b"with (open(a) as f, open(b) as g):"),
        ("RenameToKeyword", "none", b"def h(class, b):"),
    ],
)
def test_passes_check_only_what_no_interpreter_checks_later(broken: str, check: str, kept: bytes):
    """ "current" compiles under this Python only (3.9 syntax kept for a 3.8 project); "none" compiles nothing
    (an output no Python accepts is kept, for the crosscheck to replay). "grammar" rejects both."""
    passes = [PassSpec(f"tests.perturb.broken_transforms.{broken}")]
    project = ProjectInfo(min_python=(3, 8))
    unchecked = transform_source(WITHS.encode(), "m.py", passes, fraction=1.0, project=project, check=check)
    assert kept in unchecked.new_source
    assert isinstance(unchecked.outcomes[0], Applied)
    checked = transform_source(WITHS.encode(), "m.py", passes, fraction=1.0, project=project)
    assert checked.new_source is None
    assert "output does not compile, rolled back" in checked.outcomes[0].error


MODERN = "def m(a, b):\n    with (open(a) as f, open(b) as g):\n        return f.read() if 0 < b else g.read()\n"


@NEEDS_38
@pytest.mark.parametrize("check_interpreters", [True, False])
def test_only_the_pass_bringing_new_syntax_is_rolled_back(tmp_path: Path, check_interpreters: bool):
    """With python3.8 the passes skip the grammar and the crosscheck's replay rolls back; without it, the passes
    themselves: the same variant and outcomes either way. A file already written in newer syntax than the project
    declares (modern.py) keeps no pass at all, and no pass is blamed for it."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "setup.cfg").write_text("[options]\npython_requires = >=3.8\n")
    (src / "pkg" / "withs.py").write_text(WITHS)
    (src / "pkg" / "modern.py").write_text(MODERN)
    config = ApplyConfig([PARENTHESIZE, "comparison-swap"], fraction=1.0, check_interpreters=check_interpreters)
    report = apply_tree(src, tmp_path / "out", config)
    assert (tmp_path / "out" / "pkg" / "withs.py").read_text() == WITHS.replace("0 < b", "b > 0")
    assert (tmp_path / "out" / "pkg" / "modern.py").read_text() == MODERN
    assert report.changed_files == ["pkg/withs.py"]
    by_file = {f: [o for o in report.outcomes if o.file == f] for f in ("pkg/modern.py", "pkg/withs.py")}
    assert [type(o) for o in by_file["pkg/withs.py"]] == [Failed, Applied]
    # modern.py does not compile under 3.8 before any pass: no pass is to blame, the file is uncheckable
    assert [type(o) for o in by_file["pkg/modern.py"]] == [Skipped, Skipped]
    for skipped in by_file["pkg/modern.py"]:
        assert skipped.reason.startswith("uncheckable: the file itself does not compile under the checks here")
        assert "grammar (3, 8)" in skipped.reason
    failed = by_file["pkg/withs.py"][0]
    assert "output does not compile, rolled back" in failed.error
    assert "grammar (3, 8)" in failed.error
    assert ("3.8" in report.interpreter_checks) is check_interpreters


NEEDS_BOUNDS = pytest.mark.skipif(
    not installed_interpreters([(3, 8), NEWEST_CHECKED]) or CURRENT >= NEWEST_CHECKED,
    reason="needs working python3.8 and python3.13 (pyenv), this Python between them",
)


@NEEDS_BOUNDS
def test_passes_compile_nothing_between_the_oldest_and_newest_pythons():
    assert passes_check(True, (3, 8), tree_passes=False) == "none"
    assert passes_check(True, (3, 8), tree_passes=True) == "current"  # tree transforms read the outputs first
    assert passes_check(False, (3, 8), tree_passes=False) == "grammar"
    assert passes_check(True, CURRENT, tree_passes=False) == "grammar"


@NEEDS_BOUNDS
@pytest.mark.parametrize("check_interpreters", [True, False])
def test_a_pass_no_python_accepts_is_rolled_back_alone(tmp_path: Path, check_interpreters: bool):
    """Where the passes compile nothing (3.8 and 3.13 compile afterwards), the crosscheck's replay rolls back the
    pass whose output no Python accepts, keeping the other: as when each pass is compiled in the engine."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "setup.cfg").write_text("[options]\npython_requires = >=3.8\n")
    (src / "pkg" / "withs.py").write_text(WITHS)
    (src / "pkg" / "plain.py").write_text(PLAIN)
    broken = "tests.perturb.broken_transforms.RenameToKeyword"
    config = ApplyConfig(["comparison-swap", broken], fraction=1.0, check_interpreters=check_interpreters)
    report = apply_tree(src, tmp_path / "out", config)
    assert (tmp_path / "out" / "pkg" / "withs.py").read_text() == WITHS.replace("0 < b", "b > 0")
    assert (tmp_path / "out" / "pkg" / "plain.py").read_text() == PLAIN.replace("a < 0", "0 > a")
    assert report.changed_files == ["pkg/plain.py", "pkg/withs.py"]
    for rel in report.changed_files:
        outcomes = [o for o in report.outcomes if o.file == rel]
        assert [type(o) for o in outcomes] == [Applied, Failed]
        assert "output does not compile, rolled back: SyntaxError" in outcomes[1].error
    assert ("3.13" in report.interpreter_checks) is check_interpreters


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_the_compile_check_deals_files_into_balanced_parts(tmp_path: Path, count: int):
    """Each interpreter's files are split into parts of about equal size, every file in exactly one part."""
    from repoanchor.perturb.validation.crosscheck import _parts

    files = []
    for index, size in enumerate([9000, 10, 4000, 4000, 300, 700, 50, 8000]):
        files.append(tmp_path / f"m{index}.py")
        files[-1].write_text("x = 1\n" * (size // 6))
    parts = _parts({path: path.stat().st_size for path in files}, count)
    assert len(parts) == min(count, len(files))
    assert sorted(path for part in parts for path in part) == sorted(files)
    totals = sorted(sum(path.stat().st_size for path in part) for part in parts)
    assert totals[-1] - totals[0] <= max(path.stat().st_size for path in files)
    assert _parts({}, count) == [[]]


@pytest.mark.parametrize(
    ("total", "interpreters", "cores", "expected"),
    [
        (100_000, 1, 2, 1),  # small: one interpreter's start is all it is worth
        (1_000_000, 1, 2, 2),  # one interpreter would leave a core idle
        (1_000_000, 2, 2, 1),  # two interpreters fill two cores already
        (5_000_000, 2, 2, 2),  # big: parts even out the interpreters' finishing times
        (50_000_000, 1, 4, 4),  # never more parts than cores
    ],
)
def test_files_are_split_into_more_parts_where_a_core_would_idle(total, interpreters, cores, expected):
    from repoanchor.perturb.validation.crosscheck import part_count

    assert part_count(total, interpreters, cores) == expected
