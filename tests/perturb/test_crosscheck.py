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
from repoanchor.perturb.validation.compile_check import installed_interpreters

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


def test_without_the_grammar_a_pass_is_checked_under_this_python_only():
    passes = [PassSpec(PARENTHESIZE)]
    project = ProjectInfo(min_python=(3, 8))
    kept = transform_source(WITHS.encode(), "m.py", passes, fraction=1.0, project=project, grammar=False)
    assert b"with (open(a) as f, open(b) as g):" in kept.new_source
    checked = transform_source(WITHS.encode(), "m.py", passes, fraction=1.0, project=project)
    assert checked.new_source is None
    assert "grammar (3, 8)" in checked.outcomes[0].error


MODERN = "def m(a, b):\n    with (open(a) as f, open(b) as g):\n        return f.read() if 0 < b else g.read()\n"


@NEEDS_38
@pytest.mark.parametrize("check_interpreters", [True, False])
def test_only_the_pass_bringing_new_syntax_is_rolled_back(tmp_path: Path, check_interpreters: bool):
    """With python3.8 the passes skip the grammar and the crosscheck's replay rolls back; without it, the passes
    themselves: the same variant and outcomes either way. A file already written in newer syntax than the project
    declares (modern.py) keeps no pass at all."""
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
    assert [type(o) for o in by_file["pkg/modern.py"]] == [Skipped, Failed]
    for failed in (by_file["pkg/withs.py"][0], by_file["pkg/modern.py"][1]):
        assert "output does not compile, rolled back" in failed.error
        assert "grammar (3, 8)" in failed.error
    assert ("3.8" in report.interpreter_checks) is check_interpreters
