"""A suite task's level 1 where the running Python cannot compile the project's syntax: its own Python judges
(`evals/suites/checks/level1.py`, `perturb/validation/rejudge.py`), with real interpreters (pyenv's)."""

from __future__ import annotations

import pytest

from repoanchor.evals.harness.env_spec import EnvSpec
from repoanchor.evals.suites.checks.level1 import compile_check
from repoanchor.evals.suites.remap import Rejected
from tests.support.newer_syntax import GENERIC_BROKEN, GENERIC_RENAMED, NEWER, needs_newer, trees


@needs_newer
def test_a_suite_task_is_judged_by_the_projects_own_python(tmp_path):
    _, variant = trees(tmp_path, {"g.py": (None, GENERIC_RENAMED), "bad.py": (None, GENERIC_BROKEN)})
    exe = next(iter(NEWER.values()))
    env = EnvSpec(provider="local", instance_id="o__p-1", route="spec", python=exe)
    notes = compile_check(variant, ["g.py"], "variant", env)
    assert list(notes) == ["g.py"]
    assert exe in notes["g.py"]
    with pytest.raises(Rejected) as rejected:
        compile_check(variant, ["g.py", "bad.py"], "variant", env)
    assert list(rejected.value.detail["compile"]) == ["bad.py"]
    assert list(rejected.value.detail["judged"]) == ["g.py"]
    here = EnvSpec(provider="image", instance_id="o__p-1", route="env-image", python="/usr/bin/python3")
    with pytest.raises(Rejected):  # an image's Python of no known version: the running one decides, as before
        compile_check(variant, ["g.py"], "variant", here)
