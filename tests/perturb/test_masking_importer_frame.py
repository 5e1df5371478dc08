"""runtime-target-masking leaves alone a module whose top-level code reads the frame importing it.

Found on jsonschema 4.26: ``cli.py`` warns at import with ``stacklevel=2``; masked, the warning blamed the
forwarder, so ``python -m jsonschema`` (whose ``__main__`` imports it) stopped showing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.mirage.importer_frame import importer_frame_read
from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.masking import mask, reasons
from tests.support.trees import make_tree

WARN = "warnings.warn({!r}, DeprecationWarning, stacklevel=2)\n"
RETURN = "    if 1:\n        return 0\n"
DEPRECATED = "import warnings\n" + WARN.format("pkg.old is deprecated") + "\n\ndef f():\n" + RETURN
WARNS_WHEN_CALLED = "import warnings\n\n\ndef f():\n    " + WARN.format("called") + RETURN


@pytest.mark.parametrize(
    ("code", "found"),
    [
        (DEPRECATED, "on line 2"),
        ("import warnings\nclass A:\n    warnings.warn('x', DeprecationWarning, 3)\n", "on line 3"),
        ("import sys\nif True:\n    CALLER = sys._getframe(1).f_globals['__name__']\n", "sys._getframe(1)"),
        ("import inspect\nFRAME = inspect.currentframe().f_back\n", ".f_back"),
        ("import traceback\ntry:\n    traceback.print_stack()\nfinally:\n    pass\n", "traceback.print_stack()"),
        ("import logging\nlogging.getLogger().warning('x', stacklevel=2)\n", "stacklevel=2"),
        ("import inspect\ndef f(frames=inspect.stack()):\n    return frames\n", "inspect.stack()"),  # a default
        (WARNS_WHEN_CALLED, None),  # a function body runs when called
        ("import warnings\nwarnings.warn('x', stacklevel=1)\n", None),  # blames this module, masked or not
        ("import sys\nG = sys._getframe().f_globals\nH = sys._getframe(0)\n", None),  # the module's own frame
        ("import numpy as np\nGRID = np.stack([[1], [2]])\n", None),  # not a frame
        ("@deprecated('use g', stacklevel=2)\ndef f():\n    pass\n", None),  # a decorator factory's calls
        ("X = 'stacklevel=2 f_back'\n", None),  # words in a string
        ("def broken(:\n    stacklevel\n", None),  # not Python: the transform's compile check says so
    ],
)
def test_importer_frame_read(code: str, found: str | None):
    got = importer_frame_read(code)
    assert (got is None) if found is None else (found in got), got


def _run(root: Path, *args: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr (the tree's path written `<root>`) of Python run in `root`."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr.replace(str(root), "<root>")


def test_a_module_warning_its_importer_is_not_masked_and_keeps_its_warning(tmp_path: Path):
    files = {
        "pkg/__init__.py": "",
        "pkg/__main__.py": "from pkg import old, new\nprint(old.f(), new.f())\n",
        "pkg/old.py": DEPRECATED,
        "pkg/new.py": WARNS_WHEN_CALLED,
    }
    src = make_tree(tmp_path / "src", files)
    report = mask(src, tmp_path / "out")
    assert reasons(report)["pkg/old.py"][0].startswith("importer-frame: its top-level code reads the frame importing")
    assert "pkg/new.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}
    for args in (["-m", "pkg"], ["-W", "always", "-c", "import pkg.old"]):
        original, variant = _run(src, *args), _run(tmp_path / "out", *args)
        assert original[0] == 0, original
        assert "pkg.old is deprecated" in original[2]
        assert variant == original


def test_an_import_of_a_module_warning_its_importer_goes_through_no_proxy(tmp_path: Path):
    """The proxy chain's last module would run the import and be blamed: a filter naming the importer stops matching."""
    files = {
        "src/pkg/__init__.py": "",
        "src/pkg/old.py": DEPRECATED,
        "src/pkg/new.py": WARNS_WHEN_CALLED,
        "src/pkg/user.py": "from pkg.old import f\nfrom .new import f as g\nimport os\n",
        "src/pkg/relative.py": "from . import old\n",
    }
    src = make_tree(tmp_path / "src", files)
    config = ApplyConfig(["proxy-imports"], fraction=1.0, check_interpreters=False)
    report = apply_tree(src, tmp_path / "out", config)
    skipped = {(o.file, o.where): o.reason for o in report.outcomes if isinstance(o, Skipped)}
    refused = [where for (file, where), why in skipped.items() if why.startswith("importer-frame: src/pkg/old.py")]
    assert sorted(refused) == ["<module>/ImportFrom#1", "<module>/ImportFrom#1"]  # user.py's first, relative.py's
    user = (tmp_path / "out/src/pkg/user.py").read_text()
    assert user.startswith("from pkg.old import f\n")
    assert "from .new import f as g" not in user  # the statements importing no frame reader are proxied
    filters = [
        "-W",
        "error",
        "-W",
        "ignore::DeprecationWarning:pkg.user",
        "-W",
        "ignore::DeprecationWarning:pkg.relative",
    ]
    for module in ("pkg.user", "pkg.relative"):
        original, variant = (
            _run(src / "src", *filters, "-c", f"import {module}"),
            _run(tmp_path / "out/src", *filters, "-c", f"import {module}"),
        )
        assert original[0] == 0, original
        assert variant == original
