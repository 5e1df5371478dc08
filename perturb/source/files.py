"""Which files of a tree are copied, which are candidates for transformation, and why not.

Walking never follows symlinks: a symlinked file or folder is copied as a link and never
read or written through, so nothing outside the output tree can be touched.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from repoanchor.perturb.source.build_files import not_project_code
from repoanchor.perturb.variant_git import tracked_files

# Build and tool caches are not part of a project's source; copying them would only leak.
NEVER_COPY = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".tox",
        ".nox",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".venv",
        "venv",
        ".eggs",
    }
)
TEST_PATTERNS = (
    "tests/*",
    "*/tests/*",
    "test/*",
    "*/test/*",
    "testing/*",
    "*/testing/*",
    "*tests/*",
    "*_test/*",
    "testsuite/*",
    "*/testsuite/*",
    "test_*.py",
    "*/test_*.py",
    "*_test.py",
    "*_tests.py",
    "tests.py",
    "*/tests.py",
    "test.py",
    "*/test.py",
    "conftest.py",
    "*/conftest.py",
)
"""Test files are never transformed by default: they are the oracle of equivalence. A module named `tests.py`
holds a single-module project's tests (jsonpatch) or a Django app's. A folder whose name ends in `tests` (trio's
`_tests`, yapf's `yapftests`, `unittests`) or `_test` (beartype's `beartype_test`, IDLE's `idle_test`), or named
`testsuite`, is a test tree: its data modules are what tests read (beartype compares their functions' source and
line numbers)."""


@dataclass(frozen=True)
class FileSkip:
    file: str
    reason: str


def ignore_for_copy(directory: str, names: list[str]) -> set[str]:
    """`shutil.copytree` ignore hook: caches, VCS folders, virtualenvs, bytecode."""
    ignored = {n for n in names if n in NEVER_COPY or n.endswith((".pyc", ".pyo"))}
    for name in names:
        if (Path(directory) / name / "pyvenv.cfg").is_file():
            ignored.add(name)
    return ignored


def source_files(src: Path) -> frozenset[str]:
    """The files git tracks in `src` that are on disk (a working tree may have deleted some); empty when
    `src` is no git work tree. What a copy of `src`, and its commit, must hold."""
    present = (path for path in tracked_files(src) or () if (src / path).is_symlink() or (src / path).exists())
    return frozenset(present)


def copy_source_tree(src: Path, dst: Path) -> frozenset[str]:
    """Copy `src` to `dst` (symlinks as links) without caches, VCS folders, virtualenvs or bytecode,
    except what git tracks in `src`: a tracked file is part of the project whatever its name (a test's
    `.pyc` fixture, a folder called `venv`). Returns the tracked files copied (empty if `src` is no git
    work tree): a commit of `dst` must hold them all."""
    src, dst = Path(src), Path(dst)
    tracked = source_files(src)
    spared = set(tracked) | {parent.as_posix() for path in tracked for parent in PurePosixPath(path).parents}

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory).relative_to(src).as_posix()
        prefix = "" if here == "." else here + "/"
        return {name for name in ignore_for_copy(directory, names) if prefix + name not in spared}

    shutil.copytree(src, dst, symlinks=True, ignore=ignore)
    return frozenset(tracked)


def is_test_file(relpath: str, patterns: tuple[str, ...] = TEST_PATTERNS) -> bool:
    posix = PurePosixPath(relpath).as_posix()
    return any(fnmatch.fnmatch(posix, pattern) for pattern in patterns)


def read_test_files(root: Path, every: list[str]) -> dict[str, bytes]:
    """rel -> bytes of the test files among `every` (tree-relative Python files), read once for every reader."""
    return {rel: (root / rel).read_bytes() for rel in every if is_test_file(rel)}


def python_files(
    root: Path,
    *,
    include_tests: bool = False,
    test_patterns: tuple[str, ...] | None = None,
    include_build: bool = False,
) -> tuple[list[str], list[FileSkip]]:
    """Regular `.py` files under `root` (relative POSIX paths, sorted) and the ones refused, with why.
    `test_patterns` (per repository; default `TEST_PATTERNS`) name the test files left alone; build
    scripts, generated and vendored files (build_files.py) are left alone unless `include_build`."""
    test_patterns = TEST_PATTERNS if test_patterns is None else tuple(test_patterns)
    root = root.resolve()
    found: list[str] = []
    skips: list[FileSkip] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        kept = []
        for d in sorted(dirnames):
            if d in NEVER_COPY or (here / d / "pyvenv.cfg").is_file():
                continue
            if (here / d).is_symlink():
                skips.append(FileSkip(_rel(here / d, root), _symlink_reason(here / d, root)))
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = here / name
            rel = _rel(path, root)
            if path.is_symlink():
                skips.append(FileSkip(rel, _symlink_reason(path, root)))
            elif not path.is_file():
                skips.append(FileSkip(rel, "not a regular file"))
            elif not include_tests and is_test_file(rel, test_patterns):
                skips.append(FileSkip(rel, "test file: never transformed"))
            elif not include_build and (why := not_project_code(root, rel)):
                skips.append(FileSkip(rel, f"{why}: not transformed by default (--include-build-files)"))
            else:
                found.append(rel)
    return sorted(found), skips


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _symlink_reason(path: Path, root: Path) -> str:
    target = Path(os.path.realpath(path))
    if not target.is_relative_to(root):
        return f"symlink: points outside the tree ({path.readlink()}); copied as a link, never transformed"
    return f"symlink: copied as a link, never transformed (target {target.relative_to(root).as_posix()})"


def link_targets(root: Path) -> dict[str, str]:
    """Tree-relative path -> the link in the tree that points at it from another folder, for every file or folder
    link whose target lies inside the tree: a module reached through such a link is imported in the link's
    package too, where its relative imports and the files beside its `__file__` are others (a link beside its
    target, `pkg/link.py -> declared.py`, reaches the same folder). Walks no link, as `python_files`."""
    root = root.resolve()
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in NEVER_COPY]
        for name in dirnames + filenames:
            path = here / name
            target = Path(os.path.realpath(path)) if path.is_symlink() else None
            if target is not None and target.is_relative_to(root) and target != root and target.parent != here:
                found.setdefault(_rel(target, root), _rel(path, root))
    return found
