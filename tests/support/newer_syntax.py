"""Trees of a newer Python's syntax (PEP 695) for level-1 compile tests, and the installed Pythons that read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.validation.compile_check import CURRENT, installed_interpreters

NEWER = installed_interpreters([(3, minor) for minor in range(12, 15) if (3, minor) > CURRENT])
needs_newer = pytest.mark.skipif(
    CURRENT >= (3, 12) or not NEWER, reason="needs a Python >= 3.12 installed beside a running one older than 3.12"
)
GENERIC = "def first[T](items: list[T]) -> T:\n    return items[0]\n"  # PEP 695: 3.12 syntax
GENERIC_RENAMED = "def first[T](values: list[T]) -> T:\n    return values[0]\n"
GENERIC_BROKEN = "def first[T](values: list[T]) -> T:\n    return values[0\n"
PY2 = "print 'hello'\n"  # compiles under no Python 3


def trees(tmp_path: Path, files: dict[str, tuple[str | None, str]]) -> tuple[Path, Path]:
    """An original and a variant tree: {rel: (original text or None where the variant added it, variant text)}."""
    original, variant = tmp_path / "original", tmp_path / "variant"
    for rel, (before, after) in files.items():
        if before is not None:
            (original / rel).parent.mkdir(parents=True, exist_ok=True)
            (original / rel).write_text(before)
        (variant / rel).parent.mkdir(parents=True, exist_ok=True)
        (variant / rel).write_text(after)
    return original, variant
