"""Where constant-externalization puts no loader: a tree defining a module the loader imports, or one of the
standard library's names that what the loader imports may import in turn (`perturb/mirage/constants/shadowing.py`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.mirage.constants.shadowing import shadowed_loader_modules, stdlib_named
from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree

ID = "constant-externalization"


def apply(src: Path, out: Path):
    report = apply_tree(src, out, ApplyConfig([ID], fraction=1.0, seed=0))
    assert not [o for o in report.outcomes if isinstance(o, Failed)]
    return report


@pytest.mark.parametrize(
    ("files", "shadowed"),
    [
        (["json/__init__.py", "json/decoder.py", "pkg/__init__.py"], {"json": "json/__init__.py"}),
        (["src/os.py", "src/app/__init__.py"], {"os": "src/os.py"}),  # src/ is no package: on sys.path
        (["pkg/__init__.py", "pkg/json.py", "pkg/pathlib/__init__.py"], {}),  # inside a package: pkg.json
        (["json_utils.py", "tests/test_json.py"], {}),
    ],
)
def test_the_loaders_modules_shadowed_by_the_tree(files: list[str], shadowed: dict[str, str]):
    assert shadowed_loader_modules(files) == shadowed


def test_a_tree_whose_own_json_the_loader_would_import_is_refused(tmp_path: Path):
    """The standard library's own `json` package (copied into a tree, its tests run against it) loading its
    constants through `__import__("json")` imported itself half initialised: every importer of json failed."""
    files = {
        "json/__init__.py": 'SEPARATOR = ", "\n\n\ndef loads(text):\n    return text.split(SEPARATOR)\n',
        "html/__init__.py": 'ENTITY = "&amp;"\n',
    }
    src = tmp_path / "src"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    report = apply(src, tmp_path / "out")
    reasons = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped)}
    assert set(reasons) == set(files)
    assert all(
        reason.startswith("shadowed-loader-module:") and "json/__init__.py" in reason for reason in reasons.values()
    )
    assert not report.changed_files


@pytest.mark.parametrize(
    ("files", "named"),
    [
        (["re/__init__.py", "re/_parser.py", "mylib.py"], {"re/__init__.py": "re", "re/_parser.py": "re"}),
        (["src/typing.py", "src/app/__init__.py", "src/app/re.py"], {"src/typing.py": "typing"}),  # app.re: no
        (["scripts/enum.py", "collections/abc.py"], {}),  # a script's folder; a folder with no __init__.py
    ],
)
def test_the_trees_modules_named_like_the_standard_librarys(files: list[str], named: dict[str, str]):
    assert stdlib_named(files) == named


def test_the_standard_librarys_re_copied_into_a_tree_gets_no_loader(tmp_path: Path):
    """CPython's `re` package copied into a tree with its tests: json imports re while it loads, and a loader in re
    called json.loads on the half-initialised json, so every test run failed. Its other modules still get one."""
    src = tmp_path / "src"
    shutil.copytree(Path(re.__file__).parent, src / "re", ignore=shutil.ignore_patterns("__pycache__"))
    (src / "mylib.py").write_text('GREETING = "hello, world"\n\n\ndef greet():\n    return GREETING\n')
    report = apply(src, tmp_path / "out")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "out")}
    code = "import json, mylib; print(json.loads('[1]'), mylib.greet(), mylib.__file__)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("[1] hello, world " + str(tmp_path / "out"))
    skipped = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped) and o.file.startswith("re/")}
    assert set(skipped) == {f"re/{path.name}" for path in (src / "re").glob("*.py")}
    assert all(reason.startswith("stdlib-named:") for reason in skipped.values())
    assert {o.file for o in report.outcomes if isinstance(o, Applied)} == {"mylib.py"}
