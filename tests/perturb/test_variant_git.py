"""A variant's one commit: its blobs go into a pack, and it is the very commit a plain `git add` makes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from repoanchor.perturb.variant_git import init_single_commit

ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    **{f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER") for what, value in
       (("NAME", "Maintainers"), ("EMAIL", "maintainers@example.com"), ("DATE", "2024-01-01T00:00:00+00:00"))},
}  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | ENV
    cmd = ["git", "-c", "core.autocrlf=false", *args]
    return subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def _tree(root: Path) -> Path:
    """Files git stores as they are, and files it converts on the way in (.gitattributes)."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("VALUE = 1\n" * 50)
    (root / "pkg" / "empty.py").write_text("")
    (root / "one.txt").write_text("x")
    (root / "dos.txt").write_bytes(b"line one\r\nline two\r\n")  # normalised to LF by the attribute below
    (root / ".gitattributes").write_text("*.txt text eol=lf\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "kept.log").write_text("ignored, still committed\n")
    run = root / "run.sh"
    run.write_text("#!/bin/sh\necho hi\n")
    run.chmod(0o755)
    (root / "link").symlink_to("pkg/mod.py")
    return root


def _plain_commit(root: Path) -> str:
    _git(root, "init", "--quiet", "--initial-branch=main", "--template=")
    _git(root, "add", "--all", "--force")
    _git(root, "commit", "--quiet", "--no-verify", "-m", "Initial commit")
    return _git(root, "rev-parse", "HEAD").strip()


def _loose_blobs(repo: Path) -> list[str]:
    objects = repo / ".git" / "objects"
    loose = [f"{d.name}{f.name}" for d in objects.iterdir() if len(d.name) == 2 for f in d.iterdir()]
    return [sha for sha in loose if _git(repo, "cat-file", "-t", sha).strip() == "blob"]


@pytest.mark.skipif(os.name != "posix", reason="symlinks and modes")
def test_the_commit_equals_a_plain_git_add_and_its_stored_blobs_are_packed(tmp_path):
    variant = _tree(tmp_path / "variant")
    plain = _tree(tmp_path / "plain")
    commit = init_single_commit(variant)
    assert commit == _plain_commit(plain)
    assert _git(variant, "show", "HEAD:dos.txt") == "line one\nline two\n"
    assert _git(variant, "status", "--porcelain", "--ignored", "-uall") == ""
    # Only what git converts on the way in, a link, or a file too small to stream is a loose object.
    names = ("dos.txt", "link", "pkg/empty.py", "one.txt")
    loose = sorted(_git(variant, "rev-parse", f"HEAD:{name}").strip() for name in names)
    assert sorted(_loose_blobs(variant)) == loose
    assert len(_loose_blobs(plain)) > len(loose)
