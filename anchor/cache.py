"""A cache of accepted INSTRUCTION.md files, so repeated runs on the same variant skip stage 1.

Keyed by (the repository tree's content hash at the run's base commit, the model, the stage-1 prompt
version, the hint text, the task text): git's tree id is a content hash, so two clones of one variant share
entries, and any change to a file, a template, the hints or the issue misses the cache (two tasks on one
tree, e.g. Extend families, never share a map). Entries are written atomically.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from repoanchor.scaffolds.environments.local import Environment
from repoanchor.scaffolds.records import InfraError


class InstructionCache:
    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def key(self, env: Environment, model: str, prompt_version: str, hints: str, task: str) -> str:
        """`task` is the task text the stage-1 prompt carries."""
        tree = env.execute(f"git rev-parse {env.base}^{{tree}}", timeout=60)
        if tree.returncode != 0:
            raise InfraError("environment_git", f"cannot hash the repository tree: {tree.output[-500:]}")
        parts = {"tree": tree.output.strip(), "model": model, "prompts": prompt_version, "hints": hints}
        parts["task"] = hashlib.sha256(task.encode()).hexdigest()
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.md"

    def get(self, key: str) -> str | None:
        path = self.path(key)
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def put(self, key: str, instruction: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.path(key).with_suffix(".tmp")
        temporary.write_text(instruction, encoding="utf-8")
        temporary.replace(self.path(key))
