"""INSTRUCTION.md: the stage-1 artefact, its required sections and the check that decides a retry.

A section is a markdown heading whose text starts with one of the required titles (any heading level,
any case, trailing words allowed: "## Candidate files and their roles" counts as "Candidate files").
Each must be present, in any order, and carry at least one non-blank line of content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FILENAME = "INSTRUCTION.md"
REQUIRED_SECTIONS = (
    "Repository map",
    "Candidate files",
    "Dependency and runtime-resolution map",
    "Open uncertainties",
    "Plan",
)
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
MAX_CHARS = 40_000  # a stage-2 prompt must stay usable; longer files are malformed, not truncated silently


@dataclass(frozen=True)
class InstructionCheck:
    sections: dict[str, str]
    """Required title -> the section's body, for the sections found."""
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def split_sections(text: str) -> dict[str, str]:
    """Every heading's title -> the text up to the next heading (the first of a repeated title wins)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        match = HEADING.match(line)
        if match:
            current = []
            sections.setdefault(match["title"].strip(), current)
            continue
        if current is not None:
            current.append(line)
    return {title: "\n".join(lines).strip() for title, lines in sections.items()}


def _required_title(title: str) -> str | None:
    lowered = title.lower().lstrip("0123456789.) ")
    return next((req for req in REQUIRED_SECTIONS if lowered.startswith(req.lower())), None)


def check_instruction(text: str | None) -> InstructionCheck:
    if text is None:
        return InstructionCheck({}, [f"{FILENAME} was not written"])
    if not text.strip():
        return InstructionCheck({}, [f"{FILENAME} is empty"])
    if len(text) > MAX_CHARS:
        return InstructionCheck({}, [f"{FILENAME} has {len(text)} characters; at most {MAX_CHARS} are allowed"])
    found: dict[str, str] = {}
    for title, body in split_sections(text).items():
        required = _required_title(title)
        if required and required not in found:
            found[required] = body
    problems = [f"missing section: {title}" for title in REQUIRED_SECTIONS if title not in found]
    problems += [f"empty section: {title}" for title, body in found.items() if not body]
    return InstructionCheck(found, problems)
