"""proxy-imports leaves alone the imports a runtime type checker reads as text (typeguard, real, from the venv)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied
from tests.perturb.test_proxy_imports import proxy, run_py, skip_reasons
from tests.support.trees import make_tree

# inflect's `engine.defnoun`, reduced: typeguard knows `Literal` by the statement that imports it
CHECKED = """\
from typing import Literal

from typeguard import typechecked


@typechecked
def define(word: str, *, case: Literal["normalize", "preserve"] = "normalize") -> str:
    return word if case == "preserve" else word.lower()
"""
PLAIN = "from typing import Literal\nimport os\n\nSEP: Literal['/'] = os.sep\n"
CALL = "from pkg.checked import define; print(define('URL', case='preserve'))"


def test_a_module_checked_by_typeguard_keeps_its_imports_and_still_runs(tmp_path: Path):
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/checked.py": CHECKED, "pkg/plain.py": PLAIN})
    assert run_py(src, CALL) == "URL\n"
    report = proxy(src, tmp_path / "out")
    assert any("typeguard-instrumented" in reason for reason in skip_reasons(report)["pkg/checked.py"])
    assert {o.file for o in report.outcomes if isinstance(o, Applied)} == {"pkg/plain.py"}
    assert (tmp_path / "out/pkg/checked.py").read_text() == CHECKED
    assert run_py(tmp_path / "out", CALL) == "URL\n"


def test_the_same_module_through_a_proxy_breaks_typeguard(tmp_path: Path):
    """Why the refusal exists: with `Literal` imported through a proxy module, typeguard takes its strings for
    forward references (the break inflect's tests showed)."""
    files = {"pkg/__init__.py": "", "pkg/_chain.py": "from typing import Literal\n"}
    files["pkg/checked.py"] = CHECKED.replace("from typing import Literal", "from ._chain import Literal")
    src = make_tree(tmp_path / "src", files)
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-c", CALL], cwd=src, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "NameError: name 'normalize' is not defined" in run.stderr


@pytest.mark.parametrize(
    ("hook_file", "text"),
    [
        ("tests/conftest.py", "from typeguard import install_import_hook\n\ninstall_import_hook('pkg')\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '--typeguard-packages=pkg'\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = --jaxtyping-packages=pkg,typeguard.typechecked\n"),
    ],
)
def test_an_import_hook_that_instruments_packages_keeps_every_modules_imports(
    tmp_path: Path, hook_file: str, text: str
):
    files = {"pkg/__init__.py": "", "pkg/plain.py": PLAIN, "pkg/other.py": "import os\n", hook_file: text}
    report = proxy(make_tree(tmp_path / "src", files), tmp_path / "out")
    reasons = skip_reasons(report)
    for module in ("pkg/plain.py", "pkg/other.py"):
        assert any(reason.startswith(f"type-checker-hook: {hook_file} ") for reason in reasons[module])
    assert not [o for o in report.outcomes if isinstance(o, Applied)]
