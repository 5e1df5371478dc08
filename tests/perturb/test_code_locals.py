"""Transforms that add or rename locals refuse a project whose tests read code objects' local names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.source.code_locals import locals_read
from repoanchor.perturb.source.files import read_test_files
from repoanchor.perturb.transforms import SPT_IDS, get_transform_class
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

# One of every construct the 14 SPTs rewrite: each pass changes something here but operand-permute (no proven
# number) and dead-method (no class).
CORPUS = '''\
def f(xs, a, b):
    """doc"""
    total = 0
    for x in xs:
        if a and b:
            total += x
    i = 0
    while i < 3:
        i += 1
    try:
        total += 1
    except ValueError:
        pass
    s = "hello world, a long string here"
    if a < b:
        total = total + a
    else:
        total = -total
    return total, s
'''
KEYWORDS = {"dead-method": ("describe_state",), "dead-string-assign": ("state is not ready",)}


def _varnames(source: str) -> tuple[str, ...]:
    namespace: dict = {}
    exec(compile(source, "corpus.py", "exec"), namespace)
    return namespace["f"].__code__.co_varnames


@pytest.mark.parametrize("transform", SPT_IDS)
def test_a_transform_declares_changes_locals_exactly_when_it_changes_co_varnames(transform: str):
    spec = PassSpec(transform, KEYWORDS.get(transform, ()))
    result = transform_source(CORPUS.encode(), "corpus.py", [spec], seed=0, fraction=1.0, project=ProjectInfo())
    changed = result.new_source is not None and _varnames(result.new_source.decode()) != _varnames(CORPUS)
    assert getattr(get_transform_class(transform), "changes_locals", False) == changed


DECORATOR = """\
def traced(func):
    def wrapper(*args, **kw):
        if args:
            result = func(*args, **kw)
        else:
            result = None
        return result
    return wrapper
"""
READS = "from pkg.deco import traced\n\n\ndef test_locals():\n    assert traced(len).__code__.co_varnames == {}\n"


@pytest.mark.parametrize(
    ("reads", "refused"),
    [("('args', 'kw', 'result')", True), (None, False)],
    ids=["a-test-reads-co_varnames", "no-test-reads-it"],
)
def test_a_project_whose_tests_read_co_varnames_gets_no_new_or_renamed_local(
    tmp_path: Path, reads: str | None, refused: bool
):
    files = {"pkg/__init__.py": "", "pkg/deco.py": DECORATOR}
    files["tests/test_deco.py"] = READS.format(reads) if reads else "def test_nothing():\n    pass\n"
    config = ApplyConfig(["dead-string-assign", "local-rename", "if-else-swap"], fraction=1.0, keywords=["msg"])
    report = apply_tree(make_tree(tmp_path / "src", files), tmp_path / "out", config)
    applied = {o.transform for o in report.outcomes if isinstance(o, Applied)}
    reasons = {o.transform: o.reason for o in report.outcomes if isinstance(o, Skipped) and o.file == "pkg/deco.py"}
    assert "if-else-swap" in applied  # it adds no local
    if refused:
        expected = "code-locals-read: tests/test_deco.py reads co_varnames; a local this transform adds or renames"
        assert reasons["dead-string-assign"].startswith(expected)
        assert reasons["local-rename"].startswith(expected)
        assert applied == {"if-else-swap"}
    else:
        assert applied == {"if-else-swap", "dead-string-assign", "local-rename"}


@pytest.mark.parametrize(
    ("path", "text", "found"),
    [
        ("tests/test_a.py", "assert f.__code__.co_varnames == ('x',)\n", "tests/test_a.py reads co_varnames"),
        ("tests/test_a.py", "import dis\n\nprint(dis.code_info(f))\n", "tests/test_a.py reads dis.code_info"),
        ("test_b.py", "from dis import show_code\n", "test_b.py reads from dis import show_code"),
        ("tests/test_a.py", "assert exc.__traceback__.tb_frame.f_locals == {}\n", "tests/test_a.py reads f_locals"),
        ("tests/test_a.py", "args = inspect.getargvalues(frame)\n", "tests/test_a.py reads getargvalues"),
        ("tests/test_a.py", "TracebackException(*info, capture_locals=True)\n", "tests/test_a.py reads capture_locals"),
        ("tests/test_a.py", "x = sys._getframe().f_locals\ny = inspect.currentframe( ).f_locals\n", None),  # its own
        (
            "tests/test_a.py",
            "a = frame.f_locals.get('arg')\nb = frame.f_locals == {}\n",
            "tests/test_a.py reads f_locals",
        ),
        ("tests/test_a.py", "# FrameType.f_locals misses them\nx = 1  # co_varnames\n", None),  # comments
        ("tests/test_a.py", "frame = namedtuple('frame', ('f_back', 'f_locals'))\n", None),  # a field's name
        ("tests/test_a.py", "assert len(exc.__traceback__.tb_frame.f_locals) == 2\n", "tests/test_a.py reads f_locals"),
        ("tests/test_a.py", "def show(self, tb_frame):\n    return tb_frame.f_locals.items()\n", None),  # Django's
        ("tests/test_a.py", "assert isdescriptor(types.FrameType.f_locals)\n", None),  # sphinx's
        ("tests/test_a.py", "code_info = {'x': 1}\n", None),  # a name of the test's own
        ("pkg/sig.py", "names = func.__code__.co_varnames\n", None),  # library code reads the code it is given
    ],
)
def test_which_files_read_code_objects_locals(tmp_path: Path, path: str, text: str, found: str | None):
    root = make_tree(tmp_path, {"pkg/__init__.py": "", path: text})
    assert locals_read(read_test_files(root, sorted(["pkg/__init__.py", path])))[0] == found


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("record.append(agen.ag_frame.f_locals['arg'])\n", {"arg": "tests/test_a.py reads f_locals['arg']"}),  # trio's
        ("frame.f_locals.get( 'total' )\n", {"total": "tests/test_a.py reads f_locals['total']"}),
        ("assert 'arg' in tb.tb_frame.f_locals\n", {"arg": "tests/test_a.py reads f_locals['arg']"}),
        ("value = frame.f_locals[key]\n", {"*": "tests/test_a.py reads f_locals"}),  # which local is not told
        ("x = sys._getframe().f_locals['arg']\n", {}),  # the test's own frame
    ],
)
def test_which_frame_locals_tests_read_by_name(tmp_path: Path, text: str, named: dict[str, str]):
    root = make_tree(tmp_path, {"pkg/__init__.py": "", "tests/test_a.py": text})
    assert locals_read(read_test_files(root, ["pkg/__init__.py", "tests/test_a.py"])) == (None, named)


UNWRAP = """\
class Error:
    def __init__(self, error):
        self.error = error

    def unwrap(self):
        captured_error = self.error
        try:
            raise captured_error
        finally:
            del captured_error, self
"""
FRAME_TEST = """\
from pkg.err import Error


def test_unwrap_frame_holds_nothing():
    exc = ValueError()
    try:
        Error(exc).unwrap()
    except ValueError:
        pass
    frame = exc.__traceback__.tb_next.tb_frame
    assert frame.f_code.co_name == "unwrap"
    assert frame.f_locals == {}
"""


@pytest.mark.parametrize("transform", ["dead-string-assign", "dead-code", "local-rename"])
def test_a_library_frame_whose_locals_a_test_reads_gets_no_new_local(tmp_path: Path, transform: str):
    """outcome 1.3's test of ``Error.unwrap``: a new local showed in the frame's ``f_locals``."""
    files = {"pkg/__init__.py": "", "pkg/err.py": UNWRAP, "tests/test_err.py": FRAME_TEST}
    config = ApplyConfig([transform], fraction=1.0, keywords=["msg"])
    report = apply_tree(make_tree(tmp_path / "src", files), tmp_path / "out", config)
    reasons = [o.reason for o in report.outcomes if isinstance(o, Skipped) and o.file == "pkg/err.py"]
    assert reasons
    assert reasons[0].startswith("code-locals-read: tests/test_err.py reads f_locals")
    assert (tmp_path / "out/pkg/err.py").read_text() == UNWRAP
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "out"), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_err.py"]
    done = subprocess.run(command, cwd=tmp_path / "out", env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]


SCALED = (
    "def scaled(values, factor):\n    total = sum(values)\n    if total:\n        return total / factor\n    return 0\n"
)
BY_NAME_TEST = """\
from pkg.calc import scaled


def test_the_failing_frame_holds_the_total():
    try:
        scaled([1, 2], 0)
    except ZeroDivisionError as exc:
        frame = exc.__traceback__.tb_next.tb_frame
    assert frame.f_locals["total"] == 3
"""


def test_a_frame_local_a_test_reads_by_name_keeps_its_name(tmp_path: Path):
    files = {"pkg/__init__.py": "", "pkg/calc.py": SCALED, "tests/test_calc.py": BY_NAME_TEST}
    config = ApplyConfig(["dead-string-assign", "local-rename"], fraction=1.0, keywords=["msg"])
    report = apply_tree(make_tree(tmp_path / "src", files), tmp_path / "out", config)
    applied = {o.transform for o in report.outcomes if isinstance(o, Applied)}
    reasons = {o.reason for o in report.outcomes if isinstance(o, Skipped) and o.transform == "local-rename"}
    assert applied == {"dead-string-assign", "local-rename"}  # the new local beside `total` is renamed
    assert "frame local read by name: tests/test_calc.py reads f_locals['total']" in reasons
    assert "    total = sum(values)\n" in (tmp_path / "out/pkg/calc.py").read_text()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "out"), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_calc.py"]
    done = subprocess.run(command, cwd=tmp_path / "out", env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
