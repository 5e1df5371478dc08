"""Changed files are compiled under the oldest supported Python installed here: a file whose
syntax that interpreter rejects is restored from the source and its passes become Failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, Failed
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.compile_check import installed_interpreters

# A PEP 614 decorator (any expression, Python 3.9+) parses under 3.11 with feature_version=(3, 8),
# but Python 3.8 itself rejects it: only running the old interpreter catches this.
NEW_SYNTAX = "@hooks[0].register\ndef f(a, b):\n    return a if a < 0 else b\n"
PLAIN = "def g(a, b):\n    return a if a < 0 else b\n"


@pytest.mark.skipif(not installed_interpreters([(3, 8)]), reason="needs a working python3.8 (pyenv)")
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
