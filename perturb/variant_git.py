"""Give a variant tree a fresh git history: one commit, fixed neutral identity and dates.

An agent that runs `git log` or `git show HEAD` must not see the perturbation as a diff (the
prior harness committed it on top of the original history), nor a tool's name in the author.
The source's `.git` is never copied (`files.NEVER_COPY`); here a new repository is made with one
commit whose author, committer, dates and message are fixed, so the same tree always gets the
same commit id. Git runs isolated from the caller: no user or system config (signing, hooks,
templates, autocrlf), and no inherited GIT_* variables that could point it at another repo.

The commit holds every file of the tree, `.gitignore` or not (`git add --force`): projects track files
their own `.gitignore` matches (flask's `tests/test_apps/.env`), and a clone of the task — what the
grader and every environment check out — must equal the tree that was validated. The commit is then
checked: nothing on disk left out, and every file the caller expects (the source's tracked files)
present.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CommitIdentity:
    name: str = "Maintainers"
    email: str = "maintainers@example.com"
    date: str = "2024-01-01T00:00:00+00:00"
    message: str = "Initial commit"
    branch: str = "main"


class GitError(RuntimeError):
    """A git command failed while building the variant's history."""


class IntegrityError(GitError):
    """The fresh commit does not hold exactly the tree's files, or lost a file the source tracks."""


def init_single_commit(
    tree: Path, identity: CommitIdentity | None = None, *, expect: Iterable[str] | None = None
) -> str:
    """Make `tree` a repository whose history is exactly one commit of all its files; its id.

    `expect`: paths that must be in the commit (the source's tracked files, less what the caller removed)."""
    identity = identity or CommitIdentity()
    if (tree / ".git").exists():
        raise GitError(f"{tree} already has a .git: a variant's history must be fresh")
    env = _isolated_env(identity)
    _git(tree, env, "init", "--quiet", f"--initial-branch={identity.branch}", "--template=")
    # Every blob goes into one pack (git's bulk check-in for files over the threshold) instead of a loose object
    # file each: on a slow file system the loose objects' files and folders cost more than the whole
    # perturbation of a small project (flask: 0.7 s). The blobs, hence the commit id, are the same; a file that
    # .gitattributes converts is still added the usual way (git streams only files it stores as they are). zlib's
    # fastest level: object ids are hashes of the uncompressed content, so they do not change (flask's variant:
    # 0.12 s -> 0.10 s, a pack 7% bigger).
    _git(tree, env, "add", "--all", "--force", config=("core.bigFileThreshold=1", "core.compression=1"))
    _git(tree, env, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", identity.message)
    check_commit(tree, expect or ())
    return _git(tree, env, "rev-parse", "HEAD").strip()


def carry_version_tag(source: Path, repo: Path, ref: str = "HEAD") -> str | None:
    """Tag `repo`'s one commit with the nearest release tag of `ref` in `source`, if it has one.

    Projects versioned from git (setuptools_scm: pytest, ...) read their version from tags; without
    one a fresh history installs as 0.1.dev1 (or not at all), and a `minversion` check fails every
    test. The tag says no more than the original repository (and a SWE-bench image) already does."""
    env = _isolated_env(CommitIdentity())
    try:
        tag = _git(source, env, "describe", "--tags", "--abbrev=0", ref).strip()
    except GitError:  # no tag reachable (or no repository): nothing to carry
        return None
    _git(repo, env, "tag", tag)
    return tag


def check_commit(repo: Path, expect: Iterable[str]) -> None:
    """Raise IntegrityError unless HEAD holds every file on disk and every path of `expect`."""
    status = _git(repo, _isolated_env(CommitIdentity()), "status", "--porcelain", "-z", "--ignored", "-uall")
    left_out = [entry[3:] for entry in status.split("\0") if entry]
    if left_out:
        raise IntegrityError(f"{repo}: {len(left_out)} file(s) on disk are not in the commit: {_some(left_out)}")
    missing = sorted(set(expect) - (tracked_files(repo, "HEAD") or frozenset()))
    if missing:
        raise IntegrityError(f"{repo}: the commit lost {len(missing)} file(s) the source tracks: {_some(missing)}")


def tracked_files(repo: Path, commit: str | None = None) -> frozenset[str] | None:
    """The files git tracks under `repo` (in `commit`, else in its index), relative to `repo`; submodules
    (gitlinks) left out, as no copy holds them. None when `repo` is not inside a git work tree."""
    args = ["ls-tree", "-r", "-z", "--full-tree", commit] if commit else ["ls-files", "-s", "-z"]
    try:
        listing = _git(repo, _isolated_env(CommitIdentity()), *args)
    except GitError:
        return None
    entries = (line.split("\t", 1) for line in listing.split("\0") if line)
    return frozenset(path for meta, path in entries if not meta.startswith("160000"))


def _some(paths: list[str], shown: int = 5) -> str:
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more


def _isolated_env(identity: CommitIdentity) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME=identity.name,
        GIT_AUTHOR_EMAIL=identity.email,
        GIT_AUTHOR_DATE=identity.date,
        GIT_COMMITTER_NAME=identity.name,
        GIT_COMMITTER_EMAIL=identity.email,
        GIT_COMMITTER_DATE=identity.date,
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def _git(tree: Path, env: dict[str, str], *args: str, config: tuple[str, ...] = ()) -> str:
    """`config`: settings for this one command (never written to the repository's config)."""
    settings = ("commit.gpgsign=false", "core.autocrlf=false", *config)
    cmd = ["git", *(part for setting in settings for part in ("-c", setting)), *args]
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GitError(f"git {args[0]} failed in {tree}: {proc.stderr.strip()[-800:]}")
    return proc.stdout
