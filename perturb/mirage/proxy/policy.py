"""Where a module's proxies live and how it reaches them, or why it must not get any.

Proxies are written beside the target module, so a relative import in a proxy means what it
meant in the target (``.`` is the target's directory both for ``pkg/mod.py`` and for
``pkg/__init__.py``). The target reaches the first proxy by a relative import when it is part
of a package, and by an absolute sibling import when it is a top-level module; never through
``sys.path``. Every case where that reference might not resolve at run time is refused:

- a module that may run as a script (``__main__.py``, a ``__main__`` guard, ``setup.py``...)
  unless a relative import that always runs proves it runs inside its package (`scan.has_relative_import`:
  not one under an ``if`` or one whose ImportError is caught, written for a run as a script too);
- a top-level module the project installs as an explicit ``py_modules`` entry (the new
  siblings would not be installed with it), or one outside any source root (``docs/conf.py``,
  ``scripts/x.py``: nothing proves its folder is on ``sys.path``);
- a module in a folder something lists at run time (a package below an ``__init__`` that lists its own
  folder, plugin discovery; a folder another module globs; Django's ``management/commands``:
  `perturb.mirage.listing`): a proxy would be imported as one more of its modules;
- a package whose ``__init__`` rebinds ``__path__`` (the proxies might not be found), a
  module that rebinds its own ``__name__``/``__package__``/``__spec__``, and a module of a tree
  whose root is itself a package, unless relative imports prove how it is imported;
- a project supporting Python < 3.7: proxies use module ``__getattr__`` (PEP 562).
- a module some code reads as a file, named by a path literal (`mirage.read_by_name`: lark's standalone tool copies
  its modules' code).
- a module whose whole text a test reads, named as a module (`source.source_reads`: trio's stub check walks its
  ``_file_io``'s lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from repoanchor.perturb.mirage.listing import Elsewhere, listed_folder
from repoanchor.perturb.treectx import TreeContext

SCRIPT_FILES = frozenset(
    {"setup.py", "noxfile.py", "fabfile.py", "manage.py", "conftest.py", "dodo.py", "pavement.py", "__main__.py"}
)
SOURCE_ROOT_NAMES = frozenset({"src", "lib"})
# Text searches may also hit strings and comments: they only ever cause a refusal, never a proof.
_MAIN_GUARD = re.compile(r"""__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__""")
_IDENTITY_REBIND = re.compile(r"^\s*(__name__|__package__|__spec__)\s*=(?!=)", re.MULTILINE)
_PATH_REBIND = re.compile(r"__path__\s*(=|\+=)(?!=)(?!\s*\w*\.?extend_path\()")
_PY_MODULES = re.compile(r"py[_-]modules")
_PACKAGING_FILES = ("setup.py", "setup.cfg", "pyproject.toml")


@dataclass(frozen=True)
class Placement:
    folder: str
    """The target's directory, relative to the tree root ("" for the root)."""
    relative: bool
    """True: the target imports its first proxy as ``from ._name import x``; else ``from _name import x``."""
    package_init: str | None
    """The package ``__init__.py`` whose attributes a new submodule name must not clobber."""


class Refusal(Exception):
    """The module gets no proxies; the message is the skip reason ("class: detail")."""


def placement(
    ctx: TreeContext, rel: str, text: str, relative_proof: bool, listed: Elsewhere | None = None
) -> Placement:
    """How module `rel` (source `text`) of the variant tree reaches proxies beside it.

    `relative_proof`: the module has a relative import statement (not merely the text of one),
    so it can only run with a package as its ``__package__``. `listed`: the folders other modules list
    (`listing.listed_elsewhere`).
    """
    if ctx.project.min_python < (3, 7):
        version = ".".join(map(str, ctx.project.min_python))
        raise Refusal(f"unsupported-python: proxies use module __getattr__ (Python 3.7+); project supports {version}")
    path = PurePosixPath(rel)
    folder = "" if str(path.parent) == "." else path.parent.as_posix()
    if (path.name in SCRIPT_FILES or _MAIN_GUARD.search(text)) and not relative_proof:
        raise Refusal("script-module: may run as a script, where a proxy import cannot be proven to resolve")
    if read := ctx.read_by_name.get(rel):
        raise Refusal(f"read-by-name: {read}, to read as text, where imports moved to proxies would be missing")
    if read := ctx.project.sources_read.get(rel):
        raise Refusal(f"source-read: {read}; its imports rewritten to proxies would show there")
    if _IDENTITY_REBIND.search(text):
        raise Refusal("module-identity-rebound: assigns __name__/__package__/__spec__, relative imports may move")
    if link := ctx.linked(rel):
        raise Refusal(f"symlink: {link} links to it; imported through the link, its proxies would be looked for there")
    init = f"{folder}/__init__.py" if folder else "__init__.py"
    if (ctx.root / init).is_symlink():
        raise Refusal(f"symlink: {init} is a link; its package cannot be proven to sit here")

    def read(path: str) -> str | None:
        return _text(ctx, path) if ctx.exists(path) else None

    if listing := listed_folder(folder, read, listed, private=True):  # a proxy's name starts with `_`
        raise Refusal(f"listed-package: {listing}; a proxy beside it would be found as one more module")
    if ctx.exists(init):
        init_text = _text(ctx, init)
        if _PATH_REBIND.search(init_text):
            raise Refusal(f"package-path-rebound: {init} rebinds __path__; proxies beside it may not be found")
        if not folder and not relative_proof:
            raise Refusal(
                "ambiguous-package: the tree root has an __init__.py, so its modules may be imported as "
                "top-level modules (relative proxies fail) or as a package (absolute ones fail)"
            )
        return Placement(folder, True, init)
    if relative_proof:
        return Placement(folder, True, None)  # a namespace package: relative imports already work here
    return _top_level(ctx, path, folder)


def _top_level(ctx: TreeContext, path: PurePosixPath, folder: str) -> Placement:
    if not path.stem.isidentifier():
        raise Refusal(f"not-importable: {path.name} is not a valid module name")
    if not _is_source_root(ctx, folder):
        raise Refusal(
            f"not-importable: {folder or '.'} is neither a package nor a source root; "
            "nothing proves how this module is imported"
        )
    if any((ctx.root / name).is_file() and _PY_MODULES.search(_text(ctx, name)) for name in _PACKAGING_FILES):
        raise Refusal("installed-module: the project lists py_modules; new top-level siblings would not be installed")
    return Placement(folder, False, None)


def _is_source_root(ctx: TreeContext, folder: str) -> bool:
    """The tree root, ``src``/``lib``, or a folder holding a regular package (so it is a sys.path entry)."""
    if not folder or PurePosixPath(folder).name in SOURCE_ROOT_NAMES:
        return True
    return any(init.is_file() for init in ctx.path(folder).glob("*/__init__.py"))


def _text(ctx: TreeContext, rel: str) -> str:
    """A packaging or __init__ file, read only through the context (a link out of the tree is refused)."""
    try:
        return ctx.read(rel).decode("utf-8", "replace")
    except PermissionError as exc:
        raise Refusal(f"symlink: {exc}") from exc
