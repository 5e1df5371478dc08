"""A task repository as one git bundle, to carry to another machine (a Ray node) and unpack there.

The bundle holds exactly what a run may see of the repository, as `checkout_at` copies it: the commit, its
ancestors and the tags on it; no other branch, remote, hook or config of the source.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from repoanchor.scaffolds.environments.local import git


def bundle_repository(repo: Path, base: str) -> tuple[bytes, str]:
    """(a git bundle of `base` with its ancestors and the tags on it, the commit `base` names)."""
    commit = git(repo, "rev-parse", "--verify", f"{base}^{{commit}}").strip()
    with tempfile.TemporaryDirectory(prefix="repoanchor-bundle-") as scratch:
        copy = Path(scratch) / "repo.git"
        git(Path(scratch), "init", "--quiet", "--bare", str(copy))
        git(copy, "fetch", "--quiet", "--no-tags", str(repo.resolve()), commit)
        git(copy, "update-ref", "--no-deref", "HEAD", commit)  # a bundle carries refs, not bare commits
        for tag in git(repo, "tag", "--points-at", commit).split():
            git(copy, "tag", tag, commit)
        git(copy, "bundle", "create", "--quiet", str(Path(scratch) / "repo.bundle"), "--all")
        return (Path(scratch) / "repo.bundle").read_bytes(), commit


def unpack_bundle(bundle: bytes, commit: str, scratch: Path, working_tree: bool = False) -> Path:
    """A repository at `scratch`/repo holding the bundle's history, HEAD detached at `commit`; its files checked
    out with `working_tree` (a grader reads them; a run copies commits out of it and needs none)."""
    (scratch / "repo.bundle").write_bytes(bundle)
    repo = scratch / "repo"
    git(scratch, "init", "--quiet", str(repo))
    git(repo, "fetch", "--quiet", "--no-tags", str(scratch / "repo.bundle"), "HEAD", "refs/tags/*:refs/tags/*")
    git(repo, "update-ref", "--no-deref", "HEAD", commit)
    (repo / ".git" / "FETCH_HEAD").unlink(missing_ok=True)  # it names the bundle's path
    (scratch / "repo.bundle").unlink()
    if working_tree:
        git(repo, "reset", "--quiet", "--hard", commit)
    return repo
