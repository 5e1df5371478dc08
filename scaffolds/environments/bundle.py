"""A task repository as one git bundle, to carry to another machine (a Ray node) and unpack there.

The bundle holds exactly what a run may see of the repository, as `checkout_at` copies it: the commit, its
ancestors and the tags on it; no other branch, remote, hook or config of the source. A suite build's source
repository travels the same way (`bundle_sources`), with what a build reads of it: its base commits and the tags
reachable from them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from repoanchor.scaffolds.environments.local import git
from repoanchor.scaffolds.records import InfraError


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


def bundle_sources(repo: Path, revisions: list[str]) -> tuple[bytes, dict[str, str]]:
    """(a git bundle of a source repository for suite builds elsewhere, {revision: commit} of those it holds).

    Each revision that names a commit by its id (a prefix of it; a branch name would not resolve where the
    bundle lands) travels as branch `base/<commit>` with its ancestors, and with it every tag reachable from
    it: what `git describe`, hence a variant's version tag or a setuptools_scm install, finds in a full clone.
    One bundle per repository serves all of a dataset's instances of it."""
    commits = {}
    for revision in revisions:
        try:
            commit = git(repo, "rev-parse", "--verify", f"{revision}^{{commit}}").strip()
        except InfraError:  # not sent: the instance is built where the local build would fail on it alike
            continue
        if commit.startswith(revision.lower()):
            commits[revision] = commit
    tags = sorted({tag for commit in set(commits.values()) for tag in git(repo, "tag", "--merged", commit).split()})
    with tempfile.TemporaryDirectory(prefix="repoanchor-bundle-") as scratch:
        copy = Path(scratch) / "repo.git"
        git(Path(scratch), "init", "--quiet", "--bare", str(copy))
        heads = [f"{commit}:refs/heads/base/{commit}" for commit in sorted(set(commits.values()))]
        refs = heads + [f"refs/tags/{tag}:refs/tags/{tag}" for tag in tags]  # annotated tags kept as they are
        if refs:
            git(copy, "fetch", "--quiet", "--no-tags", str(repo.resolve()), *refs)
            git(copy, "bundle", "create", "--quiet", str(Path(scratch) / "repo.bundle"), "--all")
            return (Path(scratch) / "repo.bundle").read_bytes(), commits
    return b"", commits


def unpack_sources(bundle: bytes, repo: Path) -> Path:
    """`bundle_sources`' bundle as a repository at `repo` to clone instances from: its branches and tags."""
    repo.mkdir(parents=True)
    (repo.parent / f"{repo.name}.bundle").write_bytes(bundle)
    git(repo, "init", "--quiet")
    git(repo, "fetch", "--quiet", "--no-tags", f"../{repo.name}.bundle", "refs/*:refs/*")
    (repo.parent / f"{repo.name}.bundle").unlink()
    (repo / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
    return repo
