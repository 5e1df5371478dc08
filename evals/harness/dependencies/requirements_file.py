"""A repository's pip requirements file as SWE-bench's specs name it (`packages: requirements.txt`): found
where swebench looks for the repository, its `-r` includes inlined, self-installs dropped, read one
requirement at a time for the install that skips what fails."""

from __future__ import annotations

import posixpath
import shlex
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from repoanchor.evals.harness.dependencies.setup_files import SetupFiles
from repoanchor.scaffolds.records import InfraError


def requirements_text(repo: str, files: SetupFiles, paths: str | list[str] | None = None) -> str:
    """The repository's requirements file with `-r` includes inlined and self-installs (`-e .`) dropped: the first
    of `paths` (a row's own spec names them) or of swebench's paths for the repository that exists, read from
    `files` (at the environment setup commit)."""
    from swebench.harness.constants import MAP_REPO_TO_REQS_PATHS

    paths = paths or MAP_REPO_TO_REQS_PATHS.get(repo, [])
    found = files.first(paths)
    if found is None:
        raise InfraError("environment_setup", f"{repo}: none of {paths} in {files.where()} of {files.checkout}")
    return _inline(files, *found)


PACKAGE_FILES = ("requirements.txt", "environment.yml")
"""`packages` values naming a file of the repository."""


def package_list(spec: dict[str, Any]) -> list[str]:
    """The requirements a spec's `packages` names one by one (conda's names, which SWE-bench's specs share with
    PyPI), or none where it names a requirements or environment file."""
    packages = str(spec.get("packages") or "")
    return [] if packages in PACKAGE_FILES else shlex.split(packages)


def exact_pin(text: str) -> tuple[str, Version] | None:
    """(project, version) of a requirement pinned to one version (`name==X`, `name===X`, extras and markers allowed:
    where its marker holds, the spec chose that version), else None (a range, a wildcard `==1.*`, not a requirement).
    The one reading of "exact pin" for installing pins first, dating the rest and finding wheels."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    pins = [s for s in requirement.specifier if s.operator in ("==", "===") and not s.version.endswith(".*")]
    try:
        return (requirement.name, Version(pins[0].version)) if pins else None
    except InvalidVersion:
        return None


def requirement_lines(path: Path) -> list[str]:
    """The requirements of a requirements file one by one: comments, blank lines and pip options left out."""
    return requirements_in(path.read_text())


def requirements_in(text: str) -> list[str]:
    """`requirement_lines` of a requirements file's text."""
    found = (line.split(" #")[0].strip() for line in text.splitlines())
    return [line for line in found if line and not line.startswith(("#", "-"))]


def _inline(files: SetupFiles, rel: str, text: str) -> str:
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("-r "):
            included = posixpath.normpath(posixpath.join(posixpath.dirname(rel), stripped[3:].strip()))
            text = files.read(included)
            if text is None:
                raise InfraError("environment_setup", f"{rel} includes {included}, not in {files.where()}")
            lines.append(_inline(files, included, text))
        elif not stripped.startswith(("-e", ".")):
            lines.append(line)
    return "\n".join(lines)
