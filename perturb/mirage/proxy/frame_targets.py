"""Import statements that would hand a module reading its importer's frame a proxy for its importer.

A proxy chain's last module runs the original import, so a module the chain imports first has that proxy above its
top level instead of the module that wrote the import: ``warnings.warn(..., stacklevel=2)`` at import then blames
``pkg/_proxy.py`` (a ``filterwarnings`` entry naming the importing module stops matching, and a test comparing the
warning's filename fails). A statement that may import a tree module whose top-level code reads its importer's frame
(`mirage.importer_frame`) is refused (``importer-frame``). Which files a statement may import is read from paths
alone: relative imports from the importing file's folder, absolute ones from each folder above it (``src/``), a
package's ``__init__`` and each module or submodule the statement names.
"""

from __future__ import annotations

import posixpath

import libcst as cst

from repoanchor.perturb.mirage.importer_frame import importer_frame_read
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.treectx import TreeContext


def frame_refusal(
    ctx: TreeContext, rel: str, node: cst.Import | cst.ImportFrom, seen: dict[str, str | None]
) -> str | None:
    """Why statement `node` of module `rel` must not go through a proxy, or None; `seen` keeps each file's verdict."""
    for dotted, folders in _imported(node, rel):
        for path in _files(dotted, folders):
            if read := _frame_read(ctx, path, seen):
                return f"importer-frame: {path} reads its importer's frame at import ({read}); a proxy would be it"
    return None


def _frame_read(ctx: TreeContext, path: str, seen: dict[str, str | None]) -> str | None:
    if path not in seen:
        seen[path] = importer_frame_read(ctx.read(path).decode("utf-8", "replace")) if ctx.exists(path) else None
    return seen[path]


def _imported(node: cst.Import | cst.ImportFrom, rel: str) -> list[tuple[str, list[str]]]:
    """(dotted name, folders it may sit in) of every module the statement may run."""
    above = _folders_above(rel)
    if isinstance(node, cst.Import):
        return [(code_for_node(alias.name), above) for alias in node.names]
    module = code_for_node(node.module) if node.module is not None else ""
    names = [] if isinstance(node.names, cst.ImportStar) else [code_for_node(alias.name) for alias in node.names]
    if node.relative:
        folder = posixpath.dirname(rel)
        for _ in range(len(node.relative) - 1):
            folder = posixpath.dirname(folder)
        return [(".".join(filter(None, (module, name))), [folder]) for name in [""] + names]
    return [(f"{module}.{name}", above) for name in names] + [(module, above)]


def _folders_above(rel: str) -> list[str]:
    folders, folder = [], posixpath.dirname(rel)
    while folder:
        folders.append(folder)
        folder = posixpath.dirname(folder)
    return [*folders, ""]


def _files(dotted: str, folders: list[str]) -> list[str]:
    """The files running `dotted` may execute under any of `folders`: each package's ``__init__`` and the module."""
    parts = dotted.split(".") if dotted else []
    found = []
    for folder in folders:
        for depth in range(1, len(parts) + 1):
            stem = posixpath.join(folder, *parts[:depth])
            found += [posixpath.join(stem, "__init__.py"), stem + ".py"]
    return found
