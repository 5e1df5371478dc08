"""Gold-patch remapping: the dataset's fix, rewritten so that it applies to a perturbed variant.

Perturbation is a deterministic function of (tree, config, seed). So the original tree O at
`base_commit` and O+gold are both perturbed with the same config and seed, giving V and V', and
the remapped patch is `git diff V V'` (new and removed files included). Where the gold patch
shifts a transform's random draws (more import bindings, more constants), V' differs from V in
more places than the gold patch touched; the diff still turns V into a perturbation of O+gold,
and level-3 validation (tests) decides whether it fixes the issue. Decoys are never imported, so
their changes are dropped from the patch rather than handed to graders as part of the fix.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from repoanchor.evals.harness import instance_env
from repoanchor.evals.harness.grading import apply_patch, patched_files
from repoanchor.perturb.tree import TreeReport


class Rejected(Exception):
    """An instance or variant that cannot become a task; `stage` says which step refused it."""

    def __init__(self, stage: str, reason: str, detail: dict | None = None) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage, self.reason, self.detail = stage, reason, detail or {}


def run_git(cwd: Path, *args: str, git_dir: Path | None = None) -> str:
    """git without the caller's config or GIT_* variables (signing, hooks, autocrlf change the output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
    cmd = ["git", "-c", "core.autocrlf=false", "-c", "core.quotepath=false", *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])} failed in {cwd}: {proc.stderr.strip()[-800:]}")
    return proc.stdout


def gold_tree(source: Path, row: dict, dest: Path) -> Path:
    """A checkout of `source` (a clone of the instance's repository) at `base_commit`, with the gold patch applied."""
    instance_env.checkout(source, row["base_commit"], dest)
    applied, log = apply_patch(dest, row["patch"])
    if not applied:
        raise Rejected("gold", "the gold patch does not apply to the original at base_commit", {"log": log[-2000:]})
    # `patch --fuzz` (SWE-bench's fallback) leaves .orig backups; in V' they would become part of the fix.
    wanted = set(patched_files(row["patch"]))
    for line in run_git(dest, "ls-files", "--others", "--exclude-standard", "-z").split("\0"):
        if line.endswith((".orig", ".rej")) and line not in wanted:
            (dest / line).unlink()
    return dest


def decoys(*reports: TreeReport) -> list[str]:
    """Files the reports record as decoys (never imported): their changes are no part of a fix."""
    return sorted({e["visible_path"] for r in reports for e in r.resolution if e.get("kind") == "decoy"})


def remap_patch(variant_repo: Path, variant_gold: Path, scratch: Path, drop: list[str]) -> str:
    """`git diff V V'` against the variant's one commit, computed in a throwaway clone.

    The clone keeps V''s blobs out of the agent-visible repository's object store."""
    run_git(scratch.parent, "clone", "--quiet", "--no-checkout", str(variant_repo), str(scratch))
    git_dir = scratch / ".git"
    run_git(variant_gold, "read-tree", "HEAD", git_dir=git_dir)
    run_git(variant_gold, "add", "--all", git_dir=git_dir)
    if drop:
        run_git(variant_gold, "reset", "--quiet", "HEAD", "--", *drop, git_dir=git_dir)
    return run_git(variant_gold, "diff", "--cached", "--binary", "--no-renames", "HEAD", git_dir=git_dir)


def patch_stats(patch: str) -> dict:
    """Files, added and removed lines, bytes: for comparing the remapped patch with the gold one."""
    added = removed = 0
    in_hunk = False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            added += 1
        elif in_hunk and line.startswith("-"):
            removed += 1
    return {"files": patched_files(patch), "added": added, "removed": removed, "bytes": len(patch.encode())}


def remap_record(row: dict, remapped: str, original: Path, dropped: list[str]) -> dict:
    """Sizes of both patches, and the original files the remapped patch touches beyond the gold files.

    `outside_gold` lists files of the original tree, not in the gold patch, that V and V' disagree
    on: the transforms promise these are byte-identical, and this records whether they were."""
    gold, remap = patch_stats(row["patch"]), patch_stats(remapped)
    outside = [f for f in remap["files"] if f not in gold["files"] and (original / f).is_file()]
    generated = [f for f in remap["files"] if f not in gold["files"] and not (original / f).is_file()]
    return {"gold": gold, "remapped": remap, "outside_gold": outside, "generated": generated, "decoys_dropped": dropped}
