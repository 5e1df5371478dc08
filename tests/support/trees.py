"""Small source trees written from a {relative path: text or bytes} mapping, for tree-transform tests."""

from __future__ import annotations

from pathlib import Path


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)
    return root
