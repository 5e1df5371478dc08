"""Give a variant tree a fresh git history: one commit, fixed neutral identity and dates.

An agent that runs `git log` or `git show HEAD` must not see the perturbation as a diff (the
prior harness committed it on top of the original history), nor a tool's name in the author.
The source's `.git` is never copied (`files.NEVER_COPY`); here a new repository is made with one
commit whose author, committer, dates and message are fixed, so the same tree always gets the
same commit id. Git runs isolated from the caller: no user or system config (signing, hooks,
templates, autocrlf), and no inherited GIT_* variables that could point it at another repo.
"""

from __future__ import annotations

import os
import subprocess
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


def init_single_commit(tree: Path, identity: CommitIdentity | None = None) -> str:
    """Make `tree` a repository whose history is exactly one commit of all its files; its id."""
    identity = identity or CommitIdentity()
    if (tree / ".git").exists():
        raise GitError(f"{tree} already has a .git: a variant's history must be fresh")
    env = _isolated_env(identity)
    _git(tree, env, "init", "--quiet", f"--initial-branch={identity.branch}", "--template=")
    _git(tree, env, "add", "--all")
    _git(tree, env, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", identity.message)
    return _git(tree, env, "rev-parse", "HEAD").strip()


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


def _git(tree: Path, env: dict[str, str], *args: str) -> str:
    cmd = ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args]
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GitError(f"git {args[0]} failed in {tree}: {proc.stderr.strip()[-800:]}")
    return proc.stdout
