"""Why masking offers no package-wrapper layout (RepoMirage's ``pkg/mod/__init__.py``), measured: the module-file
forwarder is turned into the best package forwarder we could make (the same forwarder, moved into the package's
``__init__.py``, which also drops ``__path__``), and the original and that form are compared on what this project's
masking tests check. After import the module is the same; before it, a walker and ``python -m`` tell them apart.
If this test ever fails, the package form may have become possible: see the transform's docstring."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.masking import PACKAGE, mask, run_py
from tests.support.trees import make_tree

WALK = (
    "import json, pkgutil, pkg\n"
    "print(json.dumps([[i.name, i.ispkg] for i in pkgutil.walk_packages(pkg.__path__, 'pkg.') if i.name == 'pkg.mod']))"
)
SPEC = "import importlib.util; print(importlib.util.find_spec('pkg.mod').submodule_search_locations is not None)"
AFTER_IMPORT = "import json, pkg.mod as m; print(json.dumps([m.area(3), m.__package__, hasattr(m, '__path__')]))"


def package_form(out: Path) -> None:
    """pkg/mod.py (the generated forwarder) becomes pkg/mod/__init__.py, pointing at the same hidden sibling."""
    source = (out / "pkg" / "mod.py").read_text(encoding="utf-8")
    assert 'len("mod.py")' in source
    scope = re.search(r"(\w+) = globals\(\)\n", source).group(1)
    source = source.replace('len("mod.py")', 'len("mod/__init__.py")')
    source = source.replace(f"{scope} = globals()\n", f"{scope} = globals()\n    {scope}.pop('__path__', None)\n", 1)
    (out / "pkg" / "mod.py").unlink()
    (out / "pkg" / "mod").mkdir()
    (out / "pkg" / "mod" / "__init__.py").write_text(source, encoding="utf-8")


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("package-form")
    # The package's __init__ imports nothing, so `python -m pkg.mod` finds pkg.mod unimported, as usual.
    src = make_tree(base / "src", {**PACKAGE, "pkg/__init__.py": ""})
    mask(src, base / "out", seed=4, decoys=1, decoy_layout="siblings")
    package_form(base / "out")
    return src, base / "out"


def as_main(root: Path) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "pkg.mod"], cwd=root, env=env, capture_output=True, text=True)
    return done.returncode, (done.stdout + done.stderr).strip().splitlines()[-1]


def test_after_import_the_package_form_is_the_same_module(trees):
    src, out = trees
    assert run_py(out, AFTER_IMPORT).stdout == run_py(src, AFTER_IMPORT).stdout


def test_before_import_a_walker_and_python_m_tell_it_apart(trees):
    src, out = trees
    assert run_py(src, WALK).stdout.strip() == '[["pkg.mod", false]]'
    assert run_py(out, WALK).stdout.strip() == '[["pkg.mod", true]]'  # and the walk imports it to list its path
    assert (run_py(src, SPEC).stdout.strip(), run_py(out, SPEC).stdout.strip()) == ("False", "True")
    assert as_main(src) == (0, "main __main__ pkg pkg.mod 4 9")
    code, last = as_main(out)
    assert code == 1
    assert "is a package and cannot be directly executed" in last
