"""Which files a worktree changed against a commit, and whether they stay inside the allowed set.

Everything counts: edits, deletions, new untracked files, and commits the agent made on top of
the base (the diff is against the base commit, not HEAD). The working tree is staged into a
private index file, so the agent's own index is never touched, and renames are split into a
deletion and an addition so both paths are checked. Bytecode and pytest caches are ignored, as
are files the repository's own .gitignore excludes (an edit to .gitignore is itself a change).
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from repoanchor.perturb.source.files import is_test_file


class ScopeError(RuntimeError):
    """git could not tell what changed (not a repository, unknown base commit)."""


def _git(worktree: Path, env: dict[str, str], *args: str) -> str:
    cmd = ["git", "-c", "core.quotePath=false", "-c", "core.fileMode=false", "-c", "core.autocrlf=false", *args]
    proc = subprocess.run(cmd, cwd=worktree, env=env, capture_output=True, check=False)
    if proc.returncode != 0:
        raise ScopeError(f"git {args[0]} failed in {worktree}: {proc.stderr.decode('utf-8', 'replace')[-800:]}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def worktree_diff(worktree: Path, base: str, *diff_args: str, pathspecs: Iterable[str] = ()) -> str:
    """`git diff --cached --no-renames DIFF_ARGS base` of the whole working tree, new files included.

    The tree is staged into a private copy of the worktree's index: the agent's index is never touched,
    and files the index tracks stay tracked even where .gitignore matches them (a fresh index would
    leave them out and report them deleted). `pathspecs` narrow or exclude what is staged."""
    worktree = Path(worktree)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    _git(worktree, env, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    real_index = Path(_git(worktree, env, "rev-parse", "--path-format=absolute", "--git-path", "index").strip())
    with tempfile.TemporaryDirectory(prefix="repoanchor-scope-") as tmp:
        private = {**env, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        if real_index.is_file():  # its stat cache spares re-hashing every file; what it stages is replaced
            shutil.copy2(real_index, private["GIT_INDEX_FILE"])  # with its mtime, by which git spots racy entries
        _git(worktree, private, "add", "--all", "--", ".", *pathspecs)
        return _git(worktree, private, "diff", "--cached", "--no-renames", *diff_args, base)


def changed_paths(worktree: Path, base: str, ignore: Iterable[str] = ()) -> list[str]:
    """Sorted repository-relative paths that differ between `base` and the working tree."""
    out = worktree_diff(worktree, base, "--name-only", "-z")
    patterns = list(ignore)
    return sorted(p for p in out.split("\0") if p and not _ignored(p, patterns))


def _ignored(path: str, patterns: list[str]) -> bool:
    posix = PurePosixPath(path)
    return any(posix.match(p) or fnmatch.fnmatch(path, p) or fnmatch.fnmatch("/" + path, p) for p in patterns)


def scope_violations(changed: list[str], allowed: list[str] | None, test_files: Iterable[str] = ()) -> list[str]:
    """Changed paths outside `allowed`; with `allowed=None`, changed test files (the oracle)."""
    if allowed is not None:
        permitted = set(allowed)
        return [p for p in changed if p not in permitted]
    tests = set(test_files)
    return [p for p in changed if p in tests or is_test_file(p)]
