"""Nothing inside an assert is rewritten in a module whose asserts pytest rewrites (a plugin, a registered module):
its failure message shows the assert as written (`perturb/source/rewritten_asserts.py`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.source.rewritten_asserts import rewritten_modules
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

CHECK = "def check(a, b):\n    assert a == b\n    return a\n"
TREE = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": CHECK,
    "pkg/core.py": CHECK,
    "conftest.py": 'pytest_plugins = ["pkg.helpers"]\n',
    "tests/test_helpers.py": (
        "import pytest\n\nfrom pkg.helpers import check\n\n\n"
        "def test_message():\n    with pytest.raises(AssertionError) as caught:\n        check(1, 2)\n"
        '    assert str(caught.value).startswith("assert 1 == 2")\n'
    ),
}


PYTESTER = {
    "src/_pytest/__init__.py": "",
    "src/_pytest/pytester.py": 'pytest_plugins = ["pytester_assertions"]\n',
    "src/_pytest/pytester_assertions.py": "",
    "src/_pytest/python.py": "",
    "testing/conftest.py": "pytest_plugins = 'pytester'",
}
REGISTERED = {
    "pkg/__init__.py": "import pytest\npytest.register_assert_rewrite('pkg.checks')\n",
    "pkg/checks/__init__.py": "",
    "pkg/checks/eq.py": "",
    "pkg/x.py": "",
}
PLUGIN = {"plug/__init__.py": "", "plug/x.py": "", "setup.cfg": "[options.entry_points]\npytest11 =\n    plug = plug\n"}


@pytest.mark.parametrize(
    ("files", "rewritten"),
    [
        (TREE, {"pkg/helpers.py"}),
        # pytest's own tests load `pytester` (`_pytest.pytester`), which loads `pytester_assertions` in turn
        (PYTESTER, {"src/_pytest/pytester.py", "src/_pytest/pytester_assertions.py"}),
        (REGISTERED, {"pkg/checks/__init__.py", "pkg/checks/eq.py"}),
        (PLUGIN, {"plug/__init__.py", "plug/x.py"}),  # a plugin's distribution: all of it
        ({"pkg/__init__.py": "", "pkg/x.py": "PLUGINS = ['pkg.x']\n"}, set()),
    ],
)
def test_the_modules_pytest_rewrites(tmp_path: Path, files: dict[str, str], rewritten: set[str]):
    root = make_tree(tmp_path, files)
    every = sorted(rel for rel in files if rel.endswith(".py"))
    assert rewritten_modules(root, every) == rewritten


def _pytest(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)


def test_a_plugins_asserts_stay_as_written_and_other_modules_change(tmp_path: Path):
    src = make_tree(tmp_path / "src", TREE)
    assert _pytest(src).returncode == 0
    report = apply_tree(src, tmp_path / "out", ApplyConfig(["double-negation"], fraction=1.0, check_interpreters=False))
    assert (tmp_path / "out" / "pkg/helpers.py").read_text() == CHECK
    assert "assert not not" in (tmp_path / "out" / "pkg/core.py").read_text()
    assert {o.file for o in report.outcomes if isinstance(o, Applied)} == {"pkg/core.py"}
    assert any(o.reason.startswith("rewritten-assert") for o in report.outcomes if isinstance(o, Skipped))
    ran = _pytest(tmp_path / "out")
    assert ran.returncode == 0, ran.stdout
