"""Helpers and a sample package for the runtime-target-masking tests.

`PACKAGE` is built to exercise what masking could break: relative imports one and two levels
up, ``__file__``-relative data and a module reading its own source, a docstring-only class,
nested classes (pickled by qualname), a logger, a module-level counter (reload), star-imports
with and without ``__all__``, two import cycles, a ``__main__`` module and a main guard, and a
regular package inside a namespace package.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

from repoanchor.perturb.results import Failed, Skipped
from repoanchor.perturb.tree import ApplyConfig, TreeReport, apply_tree

ID = "runtime-target-masking"

MOD = dedent(
    '''\
    """Shapes."""
    import logging
    import os
    from . import helpers
    from .helpers import scale as _scale

    log = logging.getLogger(__name__)
    LOADS = 0
    LOADS += 1


    class Shape:
        class Side:
            pass

        def __init__(self, n):
            self.n = n

        def __eq__(self, other):
            return isinstance(other, Shape) and other.n == self.n


    class NoBody(Exception):
        """Only a docstring."""


    def area(n):
        if n < 0:
            raise NoBody(n)
        return helpers.square(_scale(n))


    def data():
        with open(os.path.join(os.path.dirname(__file__), "data.txt")) as f:
            return f.read()


    def own_source():
        with open(__file__) as f:
            return "OWN-SOURCE-MARK" in f.read()


    if __name__ == "__main__":
        print("main", __name__, __package__, __spec__.name, area(2), helpers.square(3))
    # OWN-SOURCE-MARK
    '''
)

PACKAGE = {
    "pkg/__init__.py": "from .mod import Shape, area\n",
    "pkg/mod.py": MOD,
    "pkg/data.txt": "payload\n",
    "pkg/__main__.py": (
        "import sys\nfrom .mod import area\n\nprint('pkg main', __name__, __spec__.name, area(3), sys.argv[1:])\n"
    ),
    "pkg/helpers.py": (
        "def square(x):\n    return x * x\n\n\ndef scale(x):\n    if x > 100:\n        return 100\n    return x\n"
    ),
    "pkg/star.py": "from .helpers import *\n__all__ = ['square', 'WHO']\nWHO = __name__\n",
    "pkg/nostar.py": "import os as _os\nPUBLIC = 1\n_private = 2\n",
    "pkg/user.py": (
        "from .mod import Shape\nfrom .star import *\nfrom .nostar import *\n\ndef make():\n    return Shape(2)\n"
    ),
    "pkg/a.py": "from . import b\nA = 'a'\n\ndef f():\n    return b.B\n",
    "pkg/b.py": "from . import a\nB = 'b'\n\ndef g():\n    return a.A\n",
    "pkg/c.py": "from .d import D\nC = 'c'\n",
    "pkg/d.py": "from . import c\nD = 'd'\n\ndef late():\n    return c.C\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": (
        "from ..helpers import square\nfrom .. import mod\n\ndef go():\n    if mod.Shape:\n        return square(3)\n"
    ),
    "ns/inner/__init__.py": "",
    "ns/inner/leaf.py": "def value():\n    if True:\n        return 'leaf'\n",
}


def mask(src: Path, out: Path, seed: int = 0, **options) -> TreeReport:
    config = ApplyConfig([ID], seed=seed, options={ID: options}, check_interpreters=False)
    report = apply_tree(src, out, config)
    assert not [o for o in report.outcomes if isinstance(o, Failed)]
    return report


def run_py(root: Path, code: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter whose cwd and only extra sys.path entry is `root`."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def reasons(report: TreeReport) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for o in report.outcomes:
        if isinstance(o, Skipped):
            found.setdefault(o.file, []).append(o.reason)
    return found


def entries(report: TreeReport, kind: str) -> list[dict]:
    return [e for e in report.resolution if e["kind"] == kind]
