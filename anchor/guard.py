"""Stage 1 may write INSTRUCTION.md and nothing else: find every other change and revert it.

Works through `Environment.execute`, so the same code guards a local checkout and a container. Changes
are everything `git status` reports against the base commit (edits, deletions, new files, ignored
files excluded) except INSTRUCTION.md; each is recorded as a violation and restored to the base commit.
"""

from __future__ import annotations

from repoanchor.anchor.instruction import FILENAME
from repoanchor.scaffolds.environments.local import Environment
from repoanchor.scaffolds.records import InfraError

STATUS = "git -c core.quotePath=false status --porcelain=v1 -z --untracked-files=all"


def changed_paths(env: Environment) -> list[tuple[str, str]]:
    """(status code, path) for every change in the working tree, renames split into both paths."""
    result = env.execute(STATUS, timeout=120)
    if result.returncode != 0:
        raise InfraError("environment_git", f"git status failed: {result.output[-1000:]}")
    entries = result.output.split("\0")
    changes, index = [], 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        changes.append((code.strip(), path))
        if code[0] in "RC":  # -z puts the rename's source path in the next entry
            changes.append(("D", entries[index]))
            index += 1
    return changes


def quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"


def revert_violations(env: Environment, base: str) -> list[dict]:
    """Restore every path stage 1 changed, except INSTRUCTION.md; returns what was reverted."""
    violations = [{"path": path, "change": code} for code, path in changed_paths(env) if path != FILENAME]
    if not violations:
        return []
    # Per path: back to the base commit's content, or gone when the base commit never had it.
    script = "git reset -q; for p in " + " ".join(quote(v["path"]) for v in violations) + "; do "
    script += f'if git cat-file -e {base}:"$p" 2>/dev/null; then git checkout -q {base} -- "$p"; '
    script += 'else rm -rf -- "$p"; rmdir -p --ignore-fail-on-non-empty "$(dirname "$p")" 2>/dev/null; fi; done; '
    result = env.execute(script + "true", timeout=120)
    remaining = [p for _, p in changed_paths(env) if p != FILENAME]
    if result.returncode != 0 or remaining:
        raise InfraError("environment_git", f"could not revert stage-1 changes {remaining}: {result.output[-1000:]}")
    return violations
