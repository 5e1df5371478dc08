"""A raise whose pytest error line a test expects stays at its indentation (`perturb/source/quoted_errors.py`):
pytest's `test_yield_fixture_with_no_value` expects `E               ValueError: custom did not yield a value`."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.source.quoted_errors import error_messages
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

FIXTURES = """class FixtureDef:
    def execute(self, request, generator):
        if generator is not None:
            try:
                result = next(generator)
            except StopIteration:
                raise ValueError(f"{request.fixturename} did not yield a value") from None
            return result
        return None


def other(values):
    total = 0
    for value in values:
        total += value
    if total:
        return total
    return None
"""
TEST = """EXPECTED = "E               ValueError: custom did not yield a value"


def test_it():
    assert EXPECTED
"""


def test_the_messages_of_pytest_error_lines():
    text = "x\nE               ValueError: custom did not yield a value\nE   assert 1 == 2\nE: no\n"
    assert error_messages(text) == {"custom did not yield a value"}


@pytest.mark.parametrize("transform", ["if-true-wrap", "try-reraise-wrap"])
def test_the_raise_a_test_expects_stays_at_its_indentation_and_the_rest_changes(tmp_path: Path, transform: str):
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/fixtures.py": FIXTURES, "tests/test_f.py": TEST})
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], fraction=1.0, check_interpreters=False))
    text = (tmp_path / "out" / "pkg/fixtures.py").read_text()
    assert FIXTURES.split("\n\n\n")[0] in text  # the class, line for line
    assert FIXTURES.split("\n\n\n")[1] not in text  # other() wrapped
    assert any(o.reason.startswith("quoted-error-line") for o in report.outcomes if isinstance(o, Skipped))
    assert any(isinstance(o, Applied) for o in report.outcomes)


def test_a_short_shared_word_is_no_quote(tmp_path: Path):
    """`value` alone is in both; under `MIN_TEXT` characters nothing is held."""
    test = TEST.replace("custom did not yield a value", "bad value")
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/fixtures.py": FIXTURES, "tests/test_f.py": test})
    apply_tree(src, tmp_path / "out", ApplyConfig(["if-true-wrap"], fraction=1.0, check_interpreters=False))
    assert FIXTURES.split("\n\n\n")[0] not in (tmp_path / "out" / "pkg/fixtures.py").read_text()
