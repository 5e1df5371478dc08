"""Real projects whose own test suites validate variants: {name: (version, test_cmd)}.

Commands run from the extracted sdist root with the running interpreter (the test venv), so
the project's tests see the same pytest as ours. Measured with Python 3.11 and pytest 9.2:
more-itertools 10.5.0 reports 664 test cases (663 passed, 1 skipped; its 2332 unittest
subtests fold into their parent test case) in about 3 s; toolz 1.0.0 reports 180 passed in
about 1.5 s; click 8.1.7 (src layout, so PYTHONPATH=src; its setup.cfg turns every warning into
an error, and pytest 9's deprecation of non-collection parametrize values is silenced) reports
611 test cases (589 passed, 21 skipped, 1 xfailed) in about 3 s. The commands name the test
folder so that nothing else in the sdist (setup.py, versioneer.py, docs) is ever collected.
"""

from __future__ import annotations

import shlex
import sys

# Plugins installed in our venv (hypothesis, ...) are not the project's: keeping them out makes
# runs independent of our environment and saves ~1.5 s of startup per run.
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} -m pytest -q"

PROJECTS: dict[str, tuple[str, str]] = {
    "more-itertools": ("10.5.0", f"{PYTEST} tests"),
    "toolz": ("1.0.0", f"{PYTEST} toolz/tests"),
    "click": ("8.1.7", f"PYTHONPATH=src {PYTEST} -W ignore::pytest.PytestRemovedIn10Warning tests"),
}

# Test cases each suite reports in junit under the versions above; assertions allow some slack
# because other pytest or Python versions skip or split a few.
EXPECTED_TESTS = {"more-itertools": 664, "toolz": 180, "click": 611}

_BASELINES: dict[str, tuple] = {}


def project_baseline(project: str):
    """(extracted tree, baseline run twice) of a real project, computed once per test process."""
    from repoanchor.perturb.validation.validate import run_baseline
    from tests.support.pypi import fetch_sdist

    if project not in _BASELINES:
        version, cmd = PROJECTS[project]
        tree = fetch_sdist(project, version)
        _BASELINES[project] = (tree, run_baseline(tree, cmd, repeat=2))
    return _BASELINES[project]
