"""proxy-imports on real projects: every per-test outcome of the project's own suite unchanged.

click (a multi-module src-layout package with lazy, optional and platform-conditional imports,
``TYPE_CHECKING`` blocks and a suite that tracks which modules ``import click`` pulls in) and
toolz (multi-name imports split by fan-out, star-imports, an ``__init__`` re-exporting API, the
``tlz`` meta-path mirror that walks ``toolz``'s submodules, a top-level ``versioneer.py``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, Failed
from repoanchor.perturb.source.files import python_files
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.validate import validate
from tests.support.projects import EXPECTED_TESTS, PROJECTS, project_baseline

ID = "proxy-imports"
PACKAGES = {"click": "src/click", "toolz": "toolz"}


def _case(project: str, seed: int, fraction: float, options: dict):
    label = "-".join(f"{k}{v}" for k, v in options.items()) or "defaults"
    marks = [pytest.mark.slow, pytest.mark.xdist_group(project)]
    return pytest.param(project, seed, fraction, options, id=f"{project}-seed{seed}-{label}", marks=marks)


@pytest.mark.parametrize(
    ("project", "seed", "fraction", "options"),
    [
        _case("click", 0, 1.0, {}),
        _case("click", 1, 0.7, {"depth": 6, "fanout": 3}),
        _case("toolz", 0, 1.0, {}),
        _case("toolz", 2, 0.5, {"depth": 1, "fanout": 4}),
    ],
)
def test_proxied_project_keeps_every_outcome(project: str, seed: int, fraction: float, options: dict, tmp_path: Path):
    tree, baseline = project_baseline(project)
    modules = [rel for rel in python_files(tree)[0] if rel.startswith(PACKAGES[project] + "/")]
    config = ApplyConfig([ID], fraction=fraction, file_fraction=0.0, targets=modules, seed=seed, options={ID: options})
    report = apply_tree(tree, tmp_path / "variant", config)
    assert not [o for o in report.outcomes if isinstance(o, Failed)]
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert len(applied) >= 0.5 * len(modules), (len(applied), len(modules))
    depth = options.get("depth", 4)
    assert all(len(e["chain"].split(" -> ")) == depth for e in report.resolution)
    verdict = validate(tree, tmp_path / "variant", PROJECTS[project][1], baseline=baseline)
    assert verdict.ok, verdict.to_json()
    assert verdict.n_compared >= 0.95 * EXPECTED_TESTS[project]


WALK = """
import importlib, pkgutil, sys
sys.path.insert(0, sys.argv[1])
import {package} as package
failed = []
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    try:
        importlib.import_module(info.name)
    except Exception as exc:
        failed.append((info.name, type(exc).__name__))
print(sorted(failed))
"""


@pytest.mark.slow
@pytest.mark.xdist_group("click")
def test_importing_every_module_of_the_proxied_package_fails_nowhere_new(tmp_path: Path):
    tree, _ = project_baseline("click")
    apply_tree(tree, tmp_path / "variant", ApplyConfig([ID], fraction=1.0, file_fraction=1.0, seed=3))
    code = WALK.format(package="click")

    def failures(root: Path) -> str:
        proc = subprocess.run([sys.executable, "-c", code, str(root / "src")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert failures(tmp_path / "variant") == failures(tree)
