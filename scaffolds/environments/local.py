"""Where an agent's commands run: a throwaway copy of the task repository, never the original.

`local` makes a standalone repository in a temporary folder (the base commit and its ancestors fetched into a
fresh `git init`: no pointer back to the source, no objects an earlier run left, no remote or config of the
source) and runs commands there with a scrubbed environment (no API keys, a private HOME and TMPDIR); it still
shares the host's filesystem, so it is for trusted policies. `docker` (docker_container.py) copies the same
checkout into a network-less container. Both are context managers that remove everything they created on exit, and both
compute the patch the same way: the diff of the working tree, untracked files included, against the
commit the run started from.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Protocol

from repoanchor.scaffolds.environments.scratch import scratch_folder, sweep_orphans
from repoanchor.scaffolds.models.model import SECRET_NAME
from repoanchor.scaffolds.records import CommandResult, InfraError

# Only these variables reach an agent's commands; everything else (API keys above all) stays out.
PASSED_VARIABLES = ("PATH", "LANG", "LC_ALL", "TERM", "TZ")
QUIET_TOOLS = {
    "PAGER": "cat",
    "MANPAGER": "cat",
    "LESS": "-R",
    "PIP_PROGRESS_BAR": "off",
    "TQDM_DISABLE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ litter in the checkout
}
# Build and cache litter an agent's commands can leave behind; never part of a patch.
PATCH_EXCLUDE_PATHSPECS = (
    ":(exclude,glob)**/__pycache__/**",
    ":(exclude,glob)**/*.py[co]",
    ":(exclude,glob)**/.pytest_cache/**",
)
PATCH_EXCLUDES = "' '".join(PATCH_EXCLUDE_PATHSPECS)  # quoted one by one in PATCH_SCRIPT
# `git add -A` into a private index, so the diff includes new files without touching the agent's index.
# The copy keeps the index's mtime (cp -p): git tells a "racily clean" entry (a same-size edit in the second
# the index was written) by comparing it with that mtime; a fresh copy's new mtime hid such edits.
PATCH_SCRIPT = (
    'index="$(git rev-parse --absolute-git-dir)/repoanchor-patch-index"; rm -f "$index" "$index.err"; '
    'cp -p "$(git rev-parse --absolute-git-dir)/index" "$index" 2>/dev/null; export GIT_INDEX_FILE="$index"; '
    f"if ! git -c core.fileMode=false add -A -- . '{PATCH_EXCLUDES}' >/dev/null 2>\"$index.err\"; then "
    'cat "$index.err"; rm -f "$index" "$index.err"; exit 1; fi; '
    'git -c core.fileMode=false diff --cached --binary {base}; status=$?; rm -f "$index" "$index.err"; exit $status'
)


class Environment(Protocol):
    name: str
    workdir: str
    """The repository's path as the agent's commands see it."""
    base: str
    """The commit the run started from; patches are diffs against it."""

    def execute(self, command: str, timeout: float | None = None) -> CommandResult: ...

    def patch(self) -> str: ...

    def close(self) -> None: ...


def command_environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The variables an agent's command gets: a short allow-list, never anything secret-looking."""
    env = {k: os.environ[k] for k in PASSED_VARIABLES if k in os.environ}
    env.update(QUIET_TOOLS, HOME=str(home), TMPDIR=str(home / "tmp"))
    env.update(extra or {})
    leaked = [k for k in env if SECRET_NAME.search(k)]
    if leaked:
        raise ValueError(f"refusing to pass secret-looking variables to agent commands: {leaked}")
    return env


def working_tree_patch(env: Environment) -> str:
    """The diff of `env`'s working tree against its base commit, run inside the environment itself."""
    result = env.execute(PATCH_SCRIPT.format(base=env.base), timeout=120)
    if result.returncode != 0:
        raise InfraError("environment_patch", f"git diff failed in {env.name} {env.workdir}: {result.output[-2000:]}")
    return result.output


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise InfraError("environment_setup", f"git {' '.join(args)} in {repo}: {done.stderr.strip()}")
    return done.stdout


def checkout_at(repo: Path, base: str, scratch: Path) -> Path:
    """A fresh repository holding `base` and its ancestors only: no other refs, remotes, hooks or config.

    A fetch, not a worktree or a local clone: a worktree's `.git` file names the source (two folders from
    a suite's ground truth) and shares its object store, so one run's blobs reach the next; a local clone
    hard-links every object, unreachable ones included."""
    clone = scratch / "repo"
    git(scratch, "init", "--quiet", str(clone))
    git(clone, "fetch", "--quiet", "--no-tags", str(repo), base)
    git(clone, "checkout", "--quiet", "--detach", base)
    # Tags on `base` itself (a suite's carried release tag): projects versioned from git (setuptools_scm)
    # install as 0.1.dev1 without one, and fail their own minversion checks. Nothing later is revealed.
    for tag in git(repo, "tag", "--points-at", base).split():
        git(clone, "tag", tag, base)
    (clone / ".git" / "FETCH_HEAD").unlink(missing_ok=True)  # it names the host path
    return clone


class LocalCheckout:
    """A standalone checkout of `repo` at `ref` (see `checkout_at`) in a temporary folder, removed on close."""

    name = "local"

    def __init__(self, repo: str | Path, ref: str = "HEAD", *, env: dict[str, str] | None = None) -> None:
        self.repo = Path(repo).resolve()
        if not (self.repo / ".git").exists():
            raise InfraError(
                "environment_setup", f"{self.repo} is not a git repository (need a commit to diff against)"
            )
        self.base = git(self.repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()
        sweep_orphans()  # what killed runs on this machine left behind
        self.scratch = scratch_folder("run")
        self.workdir = str(self.scratch / "repo")
        try:
            (self.scratch / "home" / "tmp").mkdir(parents=True)
            self.env = command_environment(self.scratch / "home", env)
            checkout_at(self.repo, self.base, self.scratch)
        except BaseException:  # a half-built environment must not leave its folder behind
            self.close()
            raise

    def execute(self, command: str, timeout: float | None = None) -> CommandResult:
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=self.workdir,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so a timeout kills the command's children too
        )
        try:
            out, _ = process.communicate(timeout=timeout)
            return CommandResult(out.decode("utf-8", "replace"), process.returncode)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
            return CommandResult(out.decode("utf-8", "replace"), -9, timed_out=True)

    def patch(self) -> str:
        return working_tree_patch(self)

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> LocalCheckout:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
