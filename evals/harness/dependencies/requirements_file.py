"""A repository's pip requirements file as SWE-bench's specs name it (`packages: requirements.txt`): found
where swebench looks for the repository, its `-r` includes inlined, self-installs dropped, read one
requirement at a time for the install that skips what fails."""

from __future__ import annotations

from pathlib import Path

from repoanchor.scaffolds.records import InfraError


def requirements_text(repo: str, checkout: Path, paths: str | list[str] | None = None) -> str:
    """The repository's requirements file with `-r` includes inlined and self-installs (`-e .`) dropped: the first
    of `paths` (a row's own spec names them) or of swebench's paths for the repository that exists."""
    from swebench.harness.constants import MAP_REPO_TO_REQS_PATHS

    paths = paths or MAP_REPO_TO_REQS_PATHS.get(repo, [])
    for relative in [paths] if isinstance(paths, str) else paths:
        if (checkout / relative).is_file():
            return _inline(checkout / relative)
    raise InfraError("environment_setup", f"{repo}: none of {paths} in {checkout}")


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
