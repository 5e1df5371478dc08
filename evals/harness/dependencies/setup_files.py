"""Where a spec's requirements and environment files are read: at the row's `environment_setup_commit`, as
SWE-bench's harness reads them (GitHub's raw file at that commit), not at the instance's base commit.

A venv is shared by every instance of a (repo, version), so its dependencies must not depend on which instance
built it first; and a base commit may predate the file (pydata__xarray-3095's base has no
`ci/requirements/environment.yml`, its environment commit has: the venv lacked bottleneck and two PASS_TO_PASS
tests were skipped). Where that commit is not in the checkout's history (a suite's one-commit task repository),
the checkout's own files are read, and `fallback` says so for the venv's record.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


class SetupFiles:
    """The files of `checkout` as of `commit` (its environment setup commit), or as checked out."""

    def __init__(self, checkout: Path, commit: str | None = None) -> None:
        self.checkout = Path(checkout)
        self.commit = commit if commit and _has_commit(self.checkout, commit) else None
        self.fallback = (
            f"setup files read from the checkout: environment_setup_commit {commit} is not in its history"
            if commit and self.commit is None
            else None
        )

    def read(self, rel: str) -> str | None:
        """The text of tree-relative `rel`, None where there is no such file."""
        if self.commit is None:
            path = self.checkout / rel
            return path.read_text(encoding="utf-8") if path.is_file() else None
        shown = subprocess.run(
            ["git", "-C", str(self.checkout), "show", f"{self.commit}:{rel}"], capture_output=True, check=False
        )
        return shown.stdout.decode("utf-8") if shown.returncode == 0 else None

    def first(self, paths: str | list[str] | None) -> tuple[str, str] | None:
        """(path, text) of the first of `paths` there is."""
        for rel in [paths] if isinstance(paths, str) else paths or []:
            text = self.read(rel)
            if text is not None:
                return rel, text
        return None

    def where(self) -> str:
        return f"environment_setup_commit {self.commit[:12]}" if self.commit else "the checkout"


def _has_commit(checkout: Path, commit: str) -> bool:
    if not (checkout / ".git").exists():
        return False
    found = subprocess.run(
        ["git", "-C", str(checkout), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, check=False
    )
    return found.returncode == 0
