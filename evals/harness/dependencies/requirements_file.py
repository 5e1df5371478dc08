"""A repository's pip requirements file as SWE-bench's specs name it (`packages: requirements.txt`): found
where swebench looks for the repository, its `-r` includes inlined, self-installs dropped, read one
requirement at a time for the install that skips what fails."""

from __future__ import annotations

from pathlib import Path

from repoanchor.scaffolds.records import InfraError


def requirements_text(repo: str, checkout: Path) -> str:
    """The repository's requirements file with `-r` includes inlined and self-installs (`-e .`) dropped."""
    from swebench.harness.constants import MAP_REPO_TO_REQS_PATHS

    for relative in MAP_REPO_TO_REQS_PATHS.get(repo, []):
        if (checkout / relative).is_file():
            return _inline(checkout / relative)
    raise InfraError("environment_setup", f"{repo}: none of {MAP_REPO_TO_REQS_PATHS.get(repo)} in {checkout}")


def requirement_lines(path: Path) -> list[str]:
    """The requirements of a requirements file one by one: comments, blank lines and pip options left out."""
    found = (line.split(" #")[0].strip() for line in path.read_text().splitlines())
    return [line for line in found if line and not line.startswith(("#", "-"))]


def _inline(path: Path) -> str:
    lines = []
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("-r "):
            lines.append(_inline(path.parent / stripped[3:].strip()))
        elif not stripped.startswith(("-e", ".")):
            lines.append(line)
    return "\n".join(lines)
