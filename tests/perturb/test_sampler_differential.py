"""Differential testing of the sampler: 10 variants of toolz 1.0.0 and 5 of click 8.1.7 (a multi-module
src-layout package whose suite takes longest), drawn over the whole loadable catalogue with the paper's
hyperparameters, leave every per-test outcome of the project's own suite unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.sampler.build import sample
from repoanchor.perturb.sampler.sampler import SamplerConfig
from repoanchor.perturb.transforms import TRANSFORMS, get_transform_class
from repoanchor.perturb.validation.validate import run_baseline, validate
from tests.support.projects import EXPECTED_TESTS, PROJECTS
from tests.support.pypi import fetch_sdist

ISSUES = {
    "toolz": """`merge_with` and `valmap` lose keys when a dict is empty.

    >>> merge_with(sum, {}, {'x': 1})
    KeyError: 'x'

The docstring of `groupby` says "Group a collection by a key function" but `countby()` too.
""",
    "click": """`Option(multiple=True)` ignores `default` when `envvar` is set: `resolve_envvar_value()`
returns a string and `value_from_envvar` should split it. The error says "Missing option".
""",
}
VARIANTS = {"toolz": 10, "click": 5}
GOLD = {"toolz": ["toolz/dicttoolz.py", "toolz/itertoolz.py"], "click": ["src/click/core.py"]}


def loadable_catalogue() -> list[str]:
    """All 17 once the RepoMirage modules import; the 14 SPTs (at least) before that."""
    ids = []
    for transform in TRANSFORMS:
        try:
            get_transform_class(transform)
        except ValueError:
            continue
        ids.append(transform)
    return ids


@pytest.mark.parametrize(
    "project", [pytest.param(p, marks=[pytest.mark.slow, pytest.mark.xdist_group(p)]) for p in ISSUES]
)
def test_sampled_variants_change_no_test_outcome(project: str, tmp_path: Path):
    version, cmd = PROJECTS[project]
    tree = fetch_sdist(project, version)
    baseline = run_baseline(tree, cmd, repeat=2)  # once, reused by every variant
    n = VARIANTS[project]
    config = SamplerConfig(n=n, seed=2024, catalogue=loadable_catalogue(), gold_files=GOLD[project])
    metas = sample(tree, tmp_path / "variants", config, issue=ISSUES[project], workers=2)
    assert [m["error"] for m in metas] == [None] * n
    drawn = {t for m in metas for t in m["plan"]["transforms"]}
    assert len(drawn) >= n  # variants of three draws each cover much of the catalogue
    changed = 0
    for meta in metas:
        failed = [o for o in meta["apply"]["outcomes"] if o["kind"] == "failed"]
        assert not failed, failed[:3]
        verdict = validate(tree, tmp_path / "variants" / meta["variant_id"], cmd, baseline=baseline)
        assert verdict.ok, (meta["plan"], verdict.to_json())
        assert verdict.n_compared >= 0.8 * EXPECTED_TESTS[project]
        changed += bool(meta["apply"]["files_changed"])
    assert changed >= n - 2
