"""Modules of the tree that an absolute import finds before the standard library's: where no loader may go.

The loader imports ``json``, ``os`` and ``pathlib`` by absolute name (`loader.LOADER_MODULES`). Where the tree
defines one of them in a folder its imports start from, every loader would import the project's file instead:
the transform refuses the whole tree (`shadowed_loader_modules`). The standard library's own ``json`` package,
copied into a tree with its tests, had imported itself half initialised.

The modules those three import are the tree's too where the tree defines them: CPython's ``re`` package copied
into a tree (its tests run against it) got a loader, ``json`` imports ``re`` while it loads, and the loader of
``re`` then called ``json.loads`` on the half-initialised ``json``: every test run failed. Which modules ``json``,
``os`` and ``pathlib`` import differs between Python versions (``re``, ``enum``, ``functools``, ``collections``,
``fnmatch``, ``urllib``...), so no module of the tree named like a standard library module gets a loader
(`stdlib_named`): such a module is imported in the standard library's place by everything, the loader's own
imports included.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath

from repoanchor.perturb.mirage.constants.loader import LOADER_MODULES


def import_root_modules(files: list[str]) -> dict[str, str]:
    """{rel: top-level module name} of the files (relative POSIX paths) an absolute import reaches from a folder
    imports start from: the tree's root (``python -m pytest`` puts the working folder first on ``sys.path``) and the
    folder of each top-level package (``src/``). A module of a package maps to its top-level package's name.
    (A module beside a script elsewhere is the script's own concern: `script_shadowing`.)"""
    paths = [PurePosixPath(rel) for rel in files if rel.endswith(".py")]
    packages = {path.parent for path in paths if path.name == "__init__.py"}
    roots = {PurePosixPath(".")} | {package.parent for package in packages if package.parent not in packages}
    found = {}
    for path in paths:
        top = path.parent
        while top.parent in packages:
            top = top.parent
        if top in packages:
            found[path.as_posix()] = top.name  # its top-level package sits in a root by construction
        elif path.parent in roots and path.name != "__init__.py":
            found[path.as_posix()] = path.stem
    return found


def shadowed_loader_modules(files: list[str]) -> dict[str, str]:
    """{module: file} of the `LOADER_MODULES` that a tree of `files` defines in a folder its imports start from:
    the module's own file (``os.py``) or its package's ``__init__.py``."""
    found = {}
    for rel, name in sorted(import_root_modules(files).items()):
        path = PurePosixPath(rel)
        if name in LOADER_MODULES and name in (path.stem, path.parent.name) and _own_file(path, files):
            found.setdefault(name, rel)
    return found


def _own_file(path: PurePosixPath, files: list[str]) -> bool:
    """Whether `path` is its top-level module's file: ``name.py``, or ``name/__init__.py``, outside any package."""
    folder = path.parent.parent if path.name == "__init__.py" else path.parent
    return (folder / "__init__.py").as_posix() not in files


def stdlib_named(files: list[str]) -> dict[str, str]:
    """{rel: module} of the files belonging to a top-level module or package of the tree named like a module of
    the standard library, in a folder imports start from."""
    return {rel: name for rel, name in import_root_modules(files).items() if name in sys.stdlib_module_names}


def shadowing(rel: str, loader_modules: dict[str, str], stdlib_names: dict[str, str]) -> str | None:
    """Why `rel` gets no loader, given the tree's `shadowed_loader_modules` and `stdlib_named`, else None."""
    if loader_modules:
        name, where = next(iter(loader_modules.items()))
        reason = f"the tree's own top-level `{name}` ({where}) would be imported instead of the standard library's"
        return f"shadowed-loader-module: the loader imports {', '.join(LOADER_MODULES)}; {reason}"
    if name := stdlib_names.get(rel):
        return (
            f"stdlib-named: the tree's own `{name}` is imported in the standard library's place, by what the "
            f"loader imports too ({', '.join(LOADER_MODULES)} import re, enum, functools...); its loader could run "
            "while they load"
        )
    return None


def script_shadowing(root: Path, path: PurePosixPath, text: str) -> str | None:
    """A module beside `path` named like one the loader imports, where `path` may run as a script (its folder then
    comes first on sys.path); else None."""
    if not _may_run_as_script(root, path, text):
        return None
    for name in LOADER_MODULES:
        for candidate in (path.parent / f"{name}.py", path.parent / name / "__init__.py"):
            if (root / candidate).exists():
                return candidate.as_posix()
    return None


def _may_run_as_script(root: Path, path: PurePosixPath, text: str) -> bool:
    """Whether `python path/to/file.py` is a plausible way to run the module. A module of a package runs with a
    spec (import, `python -m`) unless it has a main block or is `__main__.py`."""
    in_package = (root / path.parent / "__init__.py").exists()
    return not in_package or path.name == "__main__.py" or "__main__" in text
