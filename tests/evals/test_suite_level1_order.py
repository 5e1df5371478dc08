"""The level-1 compile check runs beside the run before the patch, yet its verdict comes first, as it did when
it ran before that run: a variant whose changed module no longer compiles is rejected at level 1, even though
its tests then fail too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repoanchor.evals.suites.build import build_suite
from repoanchor.evals.suites.checks.validate import clone, suite_env, validate_task
from repoanchor.evals.suites.remap import Rejected, run_git
from tests.support.version_project import make_version_project


def _built_task(root: Path) -> tuple[Path, dict]:
    cache, dataset = make_version_project(root / "src", {}, install="true")
    out = root / "suite"
    build_suite(dataset, "perturb", out, repo_cache=cache, other_file_rate=1.0, progress=False)
    (truth_file,) = (out / "ground_truth").iterdir()
    truth = json.loads(truth_file.read_text())
    return out / "repos" / truth_file.stem, truth


@pytest.mark.parametrize("broken", [True, False], ids=["a-changed-module-broken", "as-built"])
def test_a_compile_error_is_the_rejection_even_when_the_tests_fail_too(tmp_path: Path, broken: bool):
    repo, truth = _built_task(tmp_path)
    check = clone(repo, tmp_path / "check")
    if broken:  # committed (a run resets the tree to the row's commit): the tests that import it fail too
        (check / "verpkg" / "rates.py").write_text("def broken(:\n")
        assert "verpkg/rates.py" in truth["level1"]["files"]
        run_git(check, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "break rates")
        truth["row"]["base_commit"] = run_git(check, "rev-parse", "HEAD").strip()
    env = suite_env(truth, check, None)
    if not broken:
        assert validate_task(check, truth, env, timeout=600)["level1"] == "ok"
        return
    with pytest.raises(Rejected) as rejected:
        validate_task(check, truth, env, timeout=600)
    assert rejected.value.stage == "level1"
    assert rejected.value.reason == "variant: 1 changed file(s) do not compile"
    assert list(rejected.value.detail["compile"]) == ["verpkg/rates.py"]
