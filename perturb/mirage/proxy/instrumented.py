"""Modules whose import statements a runtime type checker reads as text: their imports are not routed.

typeguard's ``@typechecked`` (and its import hook) recompiles a function from the module's source and
recognises ``Literal``, ``Annotated``, ``Any``, ``TYPE_CHECKING`` or ``typechecked`` itself by the import
statement that bound each name (``from typing import Literal`` reads as ``typing.Literal``). Through a proxy,
``from ._chain import Literal`` reads as ``._chain.Literal``: typeguard then took ``Literal["normalize",
"preserve"]``'s strings for forward references, and inflect's ``engine.defnoun`` raised ``NameError: name
'normalize' is not defined`` (4 of its 300 tests). So a module that imports typeguard keeps its imports, and
where an import hook instruments whole packages (``install_import_hook``, typeguard's and jaxtyping's, or
their pytest options ``--typeguard-packages`` / ``--jaxtyping-packages``) every module does.
"""

from __future__ import annotations

import re
from pathlib import Path

from repoanchor.perturb.source.files import python_files

IMPORTS_TYPEGUARD = re.compile(
    r"^[ \t]*(?:from[ \t]+typeguard\b|import[ \t]+(?:[\w.]+[ \t]*,[ \t]*)*typeguard\b)", re.MULTILINE
)
IMPORT_HOOK = re.compile(rb"install_import_hook|(?:typeguard|jaxtyping)[-_]packages")
_CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini")


def import_hook_file(root: Path) -> str | None:
    """The first file (tree-relative, configuration first) that installs a type checker's import hook, if any."""
    candidates = [name for name in _CONFIG_FILES if (root / name).is_file()]
    candidates += python_files(root, include_tests=True, include_build=True)[0]
    return next((rel for rel in candidates if IMPORT_HOOK.search((root / rel).read_bytes())), None)


def instrumented(text: str, hook_file: str | None) -> str | None:
    """Why the module's imports must stay as written, or None."""
    if hook_file is not None:
        return (
            f"type-checker-hook: {hook_file} installs an import hook that recompiles modules from their source "
            "and knows typing's names by the import statements that bind them"
        )
    if IMPORTS_TYPEGUARD.search(text):
        return (
            "typeguard-instrumented: typeguard recompiles this module's checked functions from its source and "
            "knows typing's names (Literal, Annotated...) by the import statements that bind them"
        )
    return None
