"""Differential testing on real projects: every SPT at every site (phi = 1.0), alone and all
fourteen stacked, leaves every per-test outcome of the project's own suite unchanged.

Each SPT alone runs on the two smaller projects; click (the largest suite, a src layout) gets the fourteen
stacked, where every transform still rewrites every site it finds: CI time, not coverage of a transform."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, Failed
from repoanchor.perturb.transforms import SPT_IDS
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.validate import validate
from tests.support.projects import PROJECTS, project_baseline

KEYWORDS = {"more-itertools": ["chunked", "window"], "toolz": ["merge_with", "pipe"], "click": ["echo", "prompt"]}

STACKED_ONLY = {"click"}

CASES = [
    pytest.param(
        project,
        transforms,
        id=f"{project}-{transforms[0] if len(transforms) == 1 else 'all-14'}",
        marks=[pytest.mark.slow, pytest.mark.xdist_group(project)],
    )
    for project in PROJECTS
    for transforms in ([] if project in STACKED_ONLY else [[t] for t in SPT_IDS]) + [list(SPT_IDS)]
]


@pytest.mark.parametrize(("project", "transforms"), CASES)
def test_every_site_rewritten_and_every_outcome_unchanged(project: str, transforms: list[str], tmp_path: Path):
    tree, baseline = project_baseline(project)
    # include_build: toolz's only operand-permute sites are in versioneer's files, skipped by default
    config = ApplyConfig(transforms, fraction=1.0, keywords=KEYWORDS[project], seed=0, include_build=True)
    report = apply_tree(tree, tmp_path / "variant", config)
    failed = [o for o in report.outcomes if isinstance(o, Failed)]
    assert not failed, failed[:3]
    applied = {o.transform for o in report.outcomes if isinstance(o, Applied)}
    assert applied == set(transforms)
    verdict = validate(tree, tmp_path / "variant", PROJECTS[project][1], baseline=baseline)
    assert verdict.ok, verdict.to_json()
    assert verdict.n_compared >= 150
