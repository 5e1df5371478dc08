"""INSTRUCTION.md checks: required sections by heading, any level or order, non-empty bodies."""

from __future__ import annotations

import pytest

from repoanchor.anchor.instruction import REQUIRED_SECTIONS, check_instruction, split_sections

GOOD = """# INSTRUCTION

## Repository map
`pkg/` is the library; `tests/` its tests.

### 2. Candidate files and their roles
- pkg/core.py: defines add()

## Dependency and runtime-resolution map
pkg/api.py -> pkg/_impl/core.py (module __getattr__)

## Open uncertainties
Whether pkg/legacy/core.py is ever imported.

## Plan
Edit pkg/_impl/core.py; run pytest tests/test_core.py.
"""


def test_a_complete_file_passes_and_keeps_each_body():
    check = check_instruction(GOOD)
    assert check.ok, check.problems
    assert set(check.sections) == set(REQUIRED_SECTIONS)
    assert check.sections["Candidate files"] == "- pkg/core.py: defines add()"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (None, "INSTRUCTION.md was not written"),
        ("", "INSTRUCTION.md is empty"),
        ("  \n\n", "INSTRUCTION.md is empty"),
        (GOOD.replace("## Plan", "## Next steps"), "missing section: Plan"),
        (GOOD.replace("Whether pkg/legacy/core.py is ever imported.", ""), "empty section: Open uncertainties"),
        ("x" * 50_000, "INSTRUCTION.md has 50000 characters; at most 40000 are allowed"),
    ],
)
def test_each_defect_is_named(text, problem):
    check = check_instruction(text)
    assert not check.ok
    assert problem in check.problems


def test_plain_text_without_headings_misses_every_section():
    check = check_instruction("Repository map: pkg. Plan: edit core.")
    assert check.problems == [f"missing section: {title}" for title in REQUIRED_SECTIONS]


def test_a_repeated_heading_keeps_the_first_body():
    sections = split_sections("## Plan\nfirst\n## Plan\nsecond\n")
    assert sections == {"Plan": "first"}


def test_headings_inside_code_fences_are_still_headings_but_indented_code_is_not():
    # Four spaces make a markdown code block, not a heading.
    assert split_sections("    ## Plan\ntext") == {}
