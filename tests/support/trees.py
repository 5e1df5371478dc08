"""Small source trees written from a {relative path: text or bytes} mapping, for tree-transform tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)
    return root


def run_tests(tree: Path) -> subprocess.CompletedProcess:
    """The tree's own `tests/` under pytest, in a subprocess (no cache written), its output captured."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    return subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
