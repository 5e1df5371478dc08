"""A module whose whole text a test reads keeps its text under every transform (masking keeps it in the twin).

Found on trio 0.35: ``test_type_stubs_match_lists`` reads ``_file_io``'s source through its loader and walks it for
``if TYPE_CHECKING``; double-negation wrote ``if not not TYPE_CHECKING`` there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.source.source_reads import sources_read
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

EVERY = [
    "src/pkg/__init__.py",
    "src/pkg/mod.py",
    "src/pkg/data.py",
    "src/pkg/sub/__init__.py",
    "src/pkg/tests/test_x.py",  # a module of the tree that a test's own path could be mistaken for
    "other/mod.py",
]


@pytest.mark.parametrize(
    ("test", "read"),
    [
        ("import pkg.mod\nsrc = pkg.mod.__spec__.loader.get_source('pkg.mod')\n", {"src/pkg/mod.py"}),
        ("import inspect\nimport pkg.mod as m\ninspect.getsource(m)\n", {"src/pkg/mod.py"}),
        ("import inspect\nfrom pkg import mod\nlines, _ = inspect.getsourcelines(mod)\n", {"src/pkg/mod.py"}),
        ("import pkg\nwith open(pkg.__file__) as f:\n    f.read()\n", {"src/pkg/__init__.py"}),
        ("import pkg.sub\nfrom pathlib import Path\nPath(pkg.sub.__file__).read_text()\n", {"src/pkg/sub/__init__.py"}),
        ("from pkg import data\nfrom pathlib import Path\nHERE = Path(data.__file__).parent / 'x.json'\n", set()),
        ("import pkg.mod\nreport = style.check_files([pkg.mod.__file__])\n", {"src/pkg/mod.py"}),  # pycodestyle's
        ("import pkg.mod\npath = pkg.mod.__file__\n", {"src/pkg/mod.py"}),  # held in a name: what reads it is unseen
        ("import os, pkg.mod\nHERE = os.path.dirname(os.path.abspath(pkg.mod.__file__))\n", set()),
        ("import pkg.mod\nassert pkg.mod.__file__.endswith('mod.py')\n", set()),
        ("from pkg import mod\nassert Path(mod.__file__).resolve().name == 'mod.py'\n", set()),
        ("import pkg.mod\nassert pkg.mod.__file__ != __file__\n", set()),
        ("text = (Path(__file__).parents[1] / 'src' / 'pkg' / 'mod.py').read_text()\n", {"src/pkg/mod.py"}),
        ("text = open(os.path.join(HERE, '..', 'pkg', 'mod.py')).read()\n", {"src/pkg/mod.py"}),
        ("text = open('src/pkg/mod.py').read()\n", {"src/pkg/mod.py"}),
        ("text = (ROOT / 'pkg/sub/__init__.py').read_text()\n", {"src/pkg/sub/__init__.py"}),
        ("text = (HERE / 'mod.py').read_text()\n", set()),  # a bare name: which module is not told
        ("MODULE = 'src/pkg/mod.py'\ntext = open(os.path.join(ROOT, MODULE)).read()\n", {"src/pkg/mod.py"}),
        ("MODULE: str = 'pkg/data.py'\n", {"src/pkg/data.py"}),  # held in a name: what reads it is unseen
        ("SKIP = ['pkg/mod.py', 'pkg/data.py']\n", set()),  # listed among others: names, not reads
        ("text = (HERE / 'pkg' / 'other.py').read_text()\n", set()),  # no module of the tree
        ("text = (HERE / 'tests' / 'test_x.py').read_text()\n", set()),  # a test file, not src/pkg/tests/...
        ("import inspect\nimport pkg.mod\ninspect.getsource(pkg.mod.function)\n", set()),  # a function, not a module
        ("import inspect, json\ninspect.getsource(json)\n", set()),  # not a module of the tree
        ("import pkg.mod\nsrc = loader.get_source(name)\n", set()),  # no name to follow
    ],
)
def test_sources_read(test: str, read: set[str]):
    found = sources_read({"tests/test_x.py": test.encode()}, EVERY)
    assert set(found) == read
    assert all(
        why.startswith(("tests/test_x.py reads it (", "tests/test_x.py names its path (")) for why in found.values()
    )


MOD = """\
from typing import TYPE_CHECKING
import os

LIMIT = 10


class Wrapper:
    if TYPE_CHECKING:
        def read(self) -> str: ...

    def size(self, x):
        if x > LIMIT and x != 3:
            return os.sep + "large"
        else:
            return "small"
"""
TEST = """\
import pkg.mod


def test_stub_block_is_where_the_source_says():
    text = pkg.mod.__spec__.loader.get_source("pkg.mod")
    assert "    if TYPE_CHECKING:\\n        def read(self) -> str: ..." in text
    assert pkg.mod.Wrapper().size(11) == "/large"
"""


@pytest.mark.parametrize(
    "transform", ["double-negation", "if-else-swap", "and-split", "proxy-imports", "constant-externalization"]
)
def test_a_module_a_test_reads_keeps_its_text(tmp_path: Path, transform: str):
    files = {"pkg/__init__.py": "", "pkg/mod.py": MOD, "pkg/twin.py": MOD, "tests/test_mod.py": TEST}
    src = make_tree(tmp_path / "src", files)
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], fraction=1.0, check_interpreters=False))
    reasons = [o.reason for o in report.outcomes if isinstance(o, Skipped) and o.file == "pkg/mod.py"] or [""]
    assert reasons[0].startswith("source-read: tests/test_mod.py reads it (get_source('pkg.mod'))")
    assert (tmp_path / "out/pkg/mod.py").read_text() == MOD
    assert "pkg/twin.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}  # the same code elsewhere
    _passes(tmp_path / "out")


def test_masking_keeps_the_text_in_its_twin(tmp_path: Path):
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/mod.py": MOD, "tests/test_mod.py": TEST})
    config = ApplyConfig(["runtime-target-masking"], fraction=1.0, check_interpreters=False)
    report = apply_tree(src, tmp_path / "out", config)
    assert "pkg/mod.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}
    _passes(tmp_path / "out")


def _passes(root: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_mod.py"]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
