"""runtime-target-masking on real projects: every per-test outcome of the project's own suite unchanged.

click (a multi-module src-layout package whose suite tracks which modules ``import click``
pulls in, monkeypatches ``click._termui_impl`` and imports platform-specific modules) and
toolz (tests inside the package, the ``tlz`` meta-path mirror that walks ``toolz``'s
submodules, ``locals().update`` at module level; its versioneer ``_version.py`` is skipped as a
generated file, see build_files.py). At least half of each package's modules are masked; importing
every module a walk lists fails nowhere new, and no decoy is ever imported or opened.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, Failed
from repoanchor.perturb.source.files import python_files
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.validate import validate
from tests.support.projects import EXPECTED_TESTS, PROJECTS, project_baseline

ID = "runtime-target-masking"
PACKAGES = {"click": "src/click", "toolz": "toolz"}


def _modules(tree: Path, project: str) -> list[str]:
    return [rel for rel in python_files(tree)[0] if rel.startswith(PACKAGES[project] + "/")]


def _case(project: str, seed: int, options: dict):
    label = "-".join(f"{k}{v}" for k, v in options.items()) or "defaults"
    marks = [pytest.mark.slow, pytest.mark.xdist_group(project)]
    return pytest.param(project, seed, options, id=f"{project}-seed{seed}-{label}", marks=marks)


@pytest.mark.parametrize(
    ("project", "seed", "options"),
    [_case("click", 0, {}), _case("click", 1, {"decoys": 5}), _case("toolz", 0, {}), _case("toolz", 3, {"decoys": 1})],
)
def test_masked_project_keeps_every_outcome(project: str, seed: int, options: dict, tmp_path: Path):
    tree, baseline = project_baseline(project)
    modules = _modules(tree, project)
    config = ApplyConfig([ID], file_fraction=0.0, targets=modules, seed=seed, options={ID: options})
    report = apply_tree(tree, tmp_path / "variant", config)
    assert not [o for o in report.outcomes if isinstance(o, Failed)]
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert len(applied) >= 0.5 * len(modules), (len(applied), len(modules))
    decoys = [e for e in report.resolution if e["kind"] == "decoy"]
    assert len(decoys) >= len(applied) * options.get("decoys", 3) * 0.7
    verdict = validate(tree, tmp_path / "variant", PROJECTS[project][1], baseline=baseline)
    assert verdict.ok, verdict.to_json()
    assert verdict.n_compared >= 0.95 * EXPECTED_TESTS[project]


WALK = """
import importlib, json, os, pkgutil, sys
opened = set()
sys.addaudithook(lambda event, args: opened.add(os.path.realpath(args[0]))
                 if event == "open" and isinstance(args[0], str) else None)
sys.path.insert(0, sys.argv[1])
package = importlib.import_module(sys.argv[2])
failed = {}
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    try:
        importlib.import_module(info.name)
    except Exception as exc:
        failed[info.name] = type(exc).__name__
print(json.dumps({"failed": failed, "opened": sorted(opened), "modules": sorted(sys.modules)}))
"""


@pytest.mark.slow
@pytest.mark.xdist_group("click")
def test_importing_every_listed_module_fails_nowhere_new_and_never_touches_a_decoy(tmp_path: Path):
    tree, _ = project_baseline("click")
    report = apply_tree(tree, tmp_path / "variant", ApplyConfig([ID], file_fraction=1.0, seed=2))

    def walk(root: Path) -> dict:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.run(
            [sys.executable, "-c", WALK, str(root / "src"), "click"], capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    original, variant = walk(tree), walk(tmp_path / "variant")
    # A hidden module is listed too and, imported under its own name, fails as its public module does.
    public = {Path(e["runtime_path"]).stem: Path(e["visible_path"]).stem for e in report.resolution if "owner" not in e}
    mapped = {"click." + public.get(n.split(".")[1], n.split(".")[1]): error for n, error in variant["failed"].items()}
    assert mapped == original["failed"]
    decoys = {str((tmp_path / "variant" / e["visible_path"]).resolve()) for e in report.resolution if "owner" in e}
    assert len(decoys) >= 30
    assert not decoys & set(variant["opened"])
    stems = {Path(d).stem for d in decoys}
    assert not [m for m in variant["modules"] if set(m.split(".")) & stems]
