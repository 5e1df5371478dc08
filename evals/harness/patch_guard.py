"""What a candidate patch may not change before it is graded: the tests, and whatever steers how they run.

Grading resets the files the test patch names, but a candidate can add a `conftest.py`, a pytest plugin,
a `sitecustomize.py` or `.pth` file, or edit the pytest configuration, and so rewrite the test reports. Such
file diffs are stripped from the patch before it is applied (the default), or make the grade refuse the
patch (`refuse`, graded unresolved), or are kept (`keep`); the grade records which files and why.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Literal, NamedTuple

from repoanchor.perturb.source.files import is_test_file

_PATH_LINE = re.compile(
    r"^(?:diff --git a/(?P<a>.+?) b/(?P<b>.+)|--- (?:a/)?(?P<old>.+)|\+\+\+ (?:b/)?(?P<new>.+)|"
    r"(?:rename|copy) (?:from|to) (?P<moved>.+))$"
)

Policy = Literal["strip", "refuse", "keep"]
POLICIES: tuple[str, ...] = ("strip", "refuse", "keep")
PYTEST_CONFIG = {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini"}
SHARED_CONFIG = {"setup.cfg", "pyproject.toml"}
"""Configuration files a fix may change: only a diff line that mentions pytest is the tests' business."""
STARTUP = {"sitecustomize.py", "usercustomize.py"}
_FILE = re.compile(r"^diff --git ", re.MULTILINE)
_HOOK = re.compile(r"^\+\s*(?:async\s+)?def\s+pytest_\w+\s*\(", re.MULTILINE)


class Guarded(NamedTuple):
    patch: str
    """What is applied: the candidate's patch without the guarded file diffs (all of it under `keep`)."""
    touched: dict[str, str]
    """Guarded path -> why (empty when the patch leaves the tests alone)."""
    refused: bool


def file_diffs(patch: str) -> list[tuple[str, str]]:
    """(path, text) of each `diff --git` section; text before the first one is kept with path ''."""
    starts = [match.start() for match in _FILE.finditer(patch)]
    if not starts:
        return [("", patch)] if patch else []
    bounds = ([0] if starts[0] > 0 else []) + starts + [len(patch)]
    return [
        (_path(patch[a:b]) if patch.startswith("diff --git ", a) else "", patch[a:b])
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]


def _path(section: str) -> str:
    """The file a section changes: its `+++ b/` line, or `--- a/` for a deletion, or the `diff --git` line's
    b/ path (a binary diff, a mode change). Only the header is read, never the hunks."""
    lines = section.splitlines()
    header = lines[: _header_end(lines)]
    for prefix in ("+++ b/", "--- a/"):
        for line in header:
            if line.startswith(prefix):
                return line[len(prefix) :].strip()
    return lines[0].rsplit(" b/", 1)[-1].strip() if " b/" in lines[0] else ""


def _header_end(lines: list[str]) -> int:
    """Where a file section's header ends: at its first hunk or binary payload."""
    return next((i for i, line in enumerate(lines) if line.startswith(("@@", "GIT binary patch"))), len(lines))


def why_guarded(path: str, section: str) -> str | None:
    """Why the file diff at `path` changes how tests run or what they check, or None."""
    name = PurePosixPath(path).name
    if not path:
        return None
    if name == "conftest.py":
        return "conftest.py (pytest loads it with the tests)"
    if is_test_file(path):
        return "a test file"
    if name in PYTEST_CONFIG:
        return "pytest configuration"
    if name in SHARED_CONFIG and any("pytest" in line for line in _changed_lines(section)):
        return "pytest configuration (a changed line mentions pytest)"
    if name in STARTUP or name.endswith(".pth"):
        return "runs at every start of Python"
    if _HOOK.search(section):
        return "a pytest plugin (defines pytest_ hooks)"
    return None


def _changed_lines(section: str) -> list[str]:
    return [line for line in section.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def guard(patch: str, policy: Policy = "strip") -> Guarded:
    """The patch to apply under `policy`, the guarded files it touched and whether the grade refuses it."""
    if policy not in POLICIES:
        raise ValueError(f"unknown test-edit policy {policy!r}; expected one of {', '.join(POLICIES)}")
    kept, touched = [], {}
    for path, section in file_diffs(patch):
        reason = why_guarded(path, section)
        if reason is None:
            kept.append(section)
        else:
            touched[path] = reason
    if policy == "keep" or not touched:
        return Guarded(patch, touched, False)
    if policy == "refuse":
        return Guarded(patch, touched, True)
    return Guarded("".join(kept), touched, False)


def unsafe_paths(patch: str) -> list[str]:
    """Why `patch` may not be applied at all, one line per problem: a path that is absolute, climbs out with
    `..`, or reaches into a `.git` folder (a hook written there runs at the next git command, on the host),
    or a new symlink that points out of the tree. Only file headers are read (a hunk line is content)."""
    problems = set()
    for _, section in file_diffs(patch):
        lines = section.splitlines()
        end = _header_end(lines)
        for line in lines[:end]:
            match = _PATH_LINE.match(line)
            path = next((v for v in match.groupdict().values() if v), "") if match else ""
            path = path.strip().strip('"')
            if not path or path == "/dev/null":
                continue
            parts = PurePosixPath(path).parts
            if path.startswith("/") or ".." in parts:
                problems.add(f"{path}: outside the repository")
            elif any(part.lower() == ".git" for part in parts):
                problems.add(f"{path}: inside .git")
        if "new file mode 120000" in lines[:end] and end + 1 < len(lines) and lines[end + 1].startswith("+"):
            link, target = _path(section), lines[end + 1][1:].strip()
            if _escapes(link, target):
                problems.add(f"{link}: a symlink to {target}, out of the repository")
    return sorted(problems)


def _escapes(link: str, target: str) -> bool:
    """Whether a symlink at `link` (repository-relative) pointing to `target` resolves outside the repository."""
    if target.startswith("/"):
        return True
    depth = len(PurePosixPath(link).parts) - 1  # folders above the link, inside the repository
    for part in PurePosixPath(target).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return True
    return False
