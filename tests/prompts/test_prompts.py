"""Prompt templates: hint variants differ exactly in the hint section; missing variables fail loudly."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from repoanchor import prompts
from repoanchor.anchor.instruction import REQUIRED_SECTIONS

STAGES = {
    "task": {},
    "anchor_stage1": {"instruction_file": "INSTRUCTION.md", "sections": REQUIRED_SECTIONS},
    "anchor_stage2": {"instruction": "## Plan\nedit calc.py"},
}


def rendered(template: str, hints: str) -> list[str]:
    text = prompts.render(template, task="Fix add().", workdir="/work/repo", hints=hints, **STAGES[template])
    return text.splitlines()


def without_hint_section(lines: list[str]) -> list[str]:
    start, end = lines.index("<hints>"), lines.index("</hints>")
    return lines[:start] + lines[end + 2 :]  # the section ends with one blank line


@pytest.mark.parametrize("template", sorted(STAGES))
def test_structural_hints_add_exactly_the_hint_section(template: str):
    plain = rendered(template, prompts.hints("none"))
    hinted = rendered(template, prompts.hints("structural"))
    assert "<hints>" not in plain
    assert without_hint_section(hinted) == plain
    section = hinted[hinted.index("<hints>") + 1 : hinted.index("</hints>")]
    assert section == prompts.hints("structural").splitlines()


def test_structural_hints_explain_mechanisms_without_naming_any_repository_path():
    text = prompts.hints("structural")
    for mechanism in ("Proxy import chains", "Runtime target masking", "Externalised constants"):
        assert mechanism in text
    assert ".py" not in text  # a general account: never a file of any task


def test_a_user_hints_file_replaces_the_section(tmp_path: Path):
    path = tmp_path / "my_hints.txt"
    path.write_text("Check {{ 'JSON' }} resources first.\n")
    assert prompts.hints(hints_file=str(path)) == "Check JSON resources first."
    lines = rendered("task", prompts.hints(hints_file=str(path)))
    assert without_hint_section(lines) == rendered("task", "")


def test_missing_variables_and_unknown_names_fail_loudly(tmp_path: Path):
    with pytest.raises(jinja2.UndefinedError, match="workdir"):
        prompts.render("task", task="x", hints="")
    with pytest.raises(jinja2.UndefinedError, match="instruction"):
        prompts.render("anchor_stage2", task="x", hints="", workdir="/w")
    user = tmp_path / "hints.j2"
    user.write_text("Look at {{ repository_name }}")
    with pytest.raises(jinja2.UndefinedError, match="repository_name"):
        prompts.hints(hints_file=str(user))
    with pytest.raises(ValueError, match="unknown hint variant 'loud'"):
        prompts.hints("loud")
    with pytest.raises(FileNotFoundError, match="no prompt template 'nope'"):
        prompts.render("nope")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        prompts.hints(hints_file=str(tmp_path / "absent.j2"))


def test_prompt_version_changes_with_template_content(tmp_path: Path):
    one, two = tmp_path / "a.j2", tmp_path / "b.j2"
    one.write_text("A")
    two.write_text("B")
    assert prompts.prompt_version(str(one)) != prompts.prompt_version(str(two))
    assert prompts.prompt_version("anchor_stage1") == prompts.prompt_version("anchor_stage1")
