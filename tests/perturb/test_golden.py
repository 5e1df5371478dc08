"""Golden before/after cases for every transformation, including no-op and skip cases.

Each case is `cases/<transform-id>/<case>.yaml` with `before`, and `after` (omitted when the
transform must leave the file unchanged), optional `seed`, `fraction`, `keywords`,
`skipped` (substrings that must each appear in some Skipped reason) and `min_python`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.transforms import SPT_IDS

CASES = Path(__file__).parent / "cases"


def _cases():
    for path in sorted(CASES.glob("*/*.yaml")):
        yield pytest.param(path.parent.name, path, id=f"{path.parent.name}/{path.stem}")


def run_case(transform: str, case: dict):
    project = ProjectInfo(min_python=tuple(case.get("min_python", (3, 8))), **case.get("project", {}))
    return transform_source(
        case["before"].encode(),
        "pkg/mod.py",
        [PassSpec(transform, tuple(case.get("keywords", ())))],
        seed=case.get("seed", 0),
        fraction=case.get("fraction", 1.0),
        project=project,
    )


@pytest.mark.parametrize(("transform", "path"), list(_cases()))
def test_golden(transform: str, path: Path):
    case = yaml.safe_load(path.read_text())
    result = run_case(transform, case)
    assert not [o for o in result.outcomes if isinstance(o, Failed)]
    after = result.new_source.decode() if result.new_source is not None else case["before"]
    assert after == case.get("after", case["before"])
    if "after" in case and case["after"] != case["before"]:
        assert any(isinstance(o, Applied) and o.sites for o in result.outcomes)
    reasons = [o.reason for o in result.outcomes if isinstance(o, Skipped)]
    for expected in case.get("skipped", []):
        assert any(expected in reason for reason in reasons), reasons


@pytest.mark.parametrize("transform", list(SPT_IDS))
def test_every_transform_has_golden_cases(transform: str):
    names = {p.stem for p in (CASES / transform).glob("*.yaml")}
    assert len(names) >= 3, f"{transform} needs applied, no-op and skip cases; has {sorted(names)}"
