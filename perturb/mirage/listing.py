"""Packages that list their own folder at run time (plugin discovery): a new module there is found and run.

pylint's ``checkers/__init__.py`` calls ``register_plugins(linter, __path__[0])``, which imports every file
of the folder and registers what each one offers: a masked checker's hidden twin registers the checker a
second time (pylint then refuses its duplicate options, and every test run fails), and each proxy module is
one more plugin to import. So proxy-imports and runtime-target-masking add no module to a package, or a
package below it, whose ``__init__.py`` names its own location: a read of ``__path__`` (other than the
``extend_path`` idiom, Django's ``find_commands(__path__[0])``, which lists the ``commands`` folder
below, not this one, and astropy's ``TestRunner.make_test_runner_in(__path__[0])``, which only keeps the path
for a later ``astropy.test()``), or ``__file__`` together with a directory listing. Nor to the folders Django lists in
every installed app (`FRAMEWORK_LISTED`): a new module in ``management/commands`` is a new command, in
``templatetags`` a new template library. (Django's migration loader lists ``migrations`` folders too, but it
skips the ``_`` names proxies have, and their modules are named ``0001_...``, which masking refuses: the
framework's own ``django/db/migrations`` package, where 22 of SWE-bench Verified's Django fixes are, stays
perturbable.) Text search, like the other placement checks: a hit in a string or comment only ever
refuses, never proves.

A folder may be listed from another module too: sqlfluff 0.8's ``core/rules/loader.py`` globs
``os.path.join(os.path.dirname(__file__), "../../rules", "L*.py")`` and imports ``Rule_<stem>`` from each file,
so a hidden ``rules/L004_<words>.py`` was loaded as a rule and every import of sqlfluff failed. `listed_elsewhere`
finds such folders: a module the project can import (below a package, or beside one: scripts in
folders of their own are never imported) with a listing call that names a package folder of the tree by a path literal,
relative to its own folder or one above it (beside ``__file__``), or by ``<dotted.package>.__path__``; a
recursive listing (``walk``, ``**``) covers the folders below too. A call listing a package by its dotted name
(werkzeug's ``find_modules("werkzeug.debug")``) lists its folder too (`dotted_listing.py`). A listing loop that skips
private names (``if file.startswith(("_", "test_")): continue``, sympy's ``test_args.py``, which walks all of sympy and
imports every module) never meets a proxy module, whose name starts with ``_``: proxies may go there, hidden twins not.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath

from repoanchor.perturb.mirage.dotted_listing import dotted_listings
from repoanchor.perturb.mirage.file_paths import (
    LISTING_CALLS,
    ancestors,
    expression_roots,
    folders_named_in,
    joined_path,
)
from repoanchor.perturb.mirage.module_paths import dotted_module
from repoanchor.perturb.mirage.path_values import PathValues
from repoanchor.perturb.source.files import is_test_file, python_files
from repoanchor.perturb.source.sourcefile import called_name

FRAMEWORK_LISTED = {
    ("management", "commands"): "Django lists its modules as management commands",
    (None, "templatetags"): "Django lists its modules as template libraries",
}
"""(parent folder name or None for any, folder name) -> what lists the folder's modules."""
_NOT_OWN_LISTING = re.compile(r"^.*\b(extend_path|find_commands|make_test_runner_in)\(.*$", re.MULTILINE)
_PATH_READ = re.compile(r"(?<![\w.])__path__(?!\s*(?:=|\+=)(?!=))")
_FILE = re.compile(r"(?<![\w.])__file__\b")
_LISTING = re.compile(rf"\b({'|'.join(LISTING_CALLS)})\s*\(")


def lists_own_folder(init_text: str) -> str | None:
    """How a package's `__init__.py` (its text) reaches its own folder's listing, or None."""
    if _PATH_READ.search(_NOT_OWN_LISTING.sub("", init_text)):
        return "reads __path__ (its own folder)"
    listing = _LISTING.search(init_text)
    if listing and _FILE.search(init_text) and not _names_subfolders_only(init_text):
        return f"lists files ({listing.group(1)}) beside __file__"
    return None


def _names_subfolders_only(init_text: str) -> bool:
    """Whether every path the text builds from `__file__` names a folder below its own (astroid 2.x:
    `os.listdir(os.path.join(os.path.dirname(__file__), "brain"))`): a listing of those lists them, which
    `listed_elsewhere` finds, not the package's own folder. A file name, a way up (`..`, a second `dirname` or
    `.parent`) or a bare `__file__` says no."""
    try:
        tree = ast.parse(init_text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    paths = []
    for root in expression_roots(tree):
        inside = list(ast.walk(root))
        if any(isinstance(node, ast.Name) and node.id == "__file__" for node in inside):
            ups = sum(called_name(n) == "dirname" if isinstance(n, ast.Call) else _is_parent(n) for n in inside)
            dots = any(isinstance(n, ast.Constant) and isinstance(n.value, str) and ".." in n.value for n in inside)
            paths.append(joined_path(inside) if ups == 1 and not dots else None)
    return bool(paths) and all(path and "." not in path and "*" not in path for path in paths)


def _is_parent(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("parent", "parents")


Elsewhere = Mapping[str, tuple[str, bool, bool]]
"""Tree-relative folder -> (what lists it, whether the folders below it are listed too, whether every module listing
it skips the names starting with ``_``)."""
_SKIPS_PRIVATE = re.compile(
    r"""\bif\s+[\w.]+\.startswith\([^)]*(['"])_\1[^)]*\)\)?\s*:\s*(?:#[^\n]*)?\n?\s*continue\b"""
)
"""``if file.startswith(("_", "test_")): continue`` (sympy's `test_args.py`): the listing loop skips private names,
which proxy modules have (``_lazy_compat_loaders.py``), so a proxy beside the listed modules is never one of them."""
_RECURSIVE = re.compile(r"\bwalk\s*\(|\*\*|\brglob\s*\(|\bwalk_packages\s*\(")


def listed_elsewhere(root: Path) -> dict[str, tuple[str, bool, bool]]:
    """The folders of the tree at `root` that some module of it lists (see above), tests included: pydantic 1.10's
    `test_v1.py` parametrizes a test by `os.listdir(pydantic.__path__[0])`, so a module added there is one
    more test, which no PASS_TO_PASS list names, so a suite's validation would not see it."""
    files = python_files(root, include_build=True, include_tests=True)[0]
    packages = {posixpath.dirname(rel) for rel in files if rel.endswith("/__init__.py")}
    roots = {posixpath.dirname(package) for package in packages}  # on sys.path: the tree, `src/`
    root_package = "__init__.py" in files  # the tree is itself a package (an app checked out alone): all of it
    module_folders = {posixpath.dirname(rel) for rel in files}  # astroid 2.x's `brain` has no __init__.py
    values = PathValues(root, files, packages)
    by_name = {dotted_module(f"{package}/__init__.py", packages): package for package in packages if package}
    found: dict[str, tuple[str, bool, bool]] = {}
    for rel in files:
        home = posixpath.dirname(rel)
        imported = root_package or home in roots or packages.intersection(ancestors(home)) or is_test_file(rel)
        if not imported:
            continue  # a script in a folder of scripts (`util/generate/`): the project never imports it (pytest
            # imports a test wherever it is)
        data = (root / rel).read_bytes()
        for folder, (why, recursive, skips_private) in _listed_by(rel, data, home, by_name, module_folders, values):
            before = found.get(folder)
            if before is not None:  # listed by more modules: the first one named, below if any is, private if all skip
                why, recursive, skips_private = before[0], before[1] or recursive, before[2] and skips_private
            found[folder] = (why, recursive, skips_private)
    return found


def _listed_by(
    rel: str, data: bytes, home: str, by_name: dict[str, str], folders: set[str], values: PathValues
) -> list[tuple[str, tuple[str, bool, bool]]]:
    """(folder, (why, recursive, skips private names)) for each folder module `rel` (its bytes `data`) lists: its own
    folder (an `__init__.py`), packages by dotted name, folders by path. The text is decoded and read for a loop
    skipping private names only where the module lists something."""
    named: list[tuple[str, str, bool]] = []
    text = None
    if rel == "__init__.py" or rel.endswith("/__init__.py"):
        text = data.decode("utf-8", "replace")
        if own := lists_own_folder(text):
            named.append((home, f"{rel} {own}", True))  # and every folder below it
    named += [(f, f"{rel} lists it by its dotted name", deep) for f, deep in dotted_listings(data, by_name).items()]
    if any(call.encode() in data for call in LISTING_CALLS):
        text = text if text is not None else data.decode("utf-8", "replace")
        if _LISTING.search(text):
            named += [(f, f"{rel} lists it", deep) for f, deep in _listings(rel, text, data, folders, values).items()]
    if not named:
        return []
    skips = bool(_SKIPS_PRIVATE.search(text if text is not None else data.decode("utf-8", "replace")))
    return [(folder, (why, deep, skips)) for folder, why, deep in named]


def _listings(rel: str, text: str, data: bytes, folders: set[str], values: PathValues) -> dict[str, bool]:
    """Folder -> recursively, for each folder module `rel` lists: by a path literal beside `__file__` or a
    package's `__path__` (`folders_named`), or by a path value followed through names (`PathValues`)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    named = {}
    if b"__file__" in data or b"__path__" in data:
        named = dict.fromkeys(folders_named_in(rel, tree, folders), bool(_RECURSIVE.search(text)))
    for folder, recursive in values.listed(rel, tree).items():
        if folder in folders:
            named[folder] = named.get(folder, False) or recursive
    return named


def listed_folder(
    folder: str, read_init: Callable[[str], str | None], elsewhere: Elsewhere | None = None, private: bool = False
) -> str | None:
    """Why a new module in `folder` (tree-relative, "" for the root) would be found by a listing, or None.
    `private`: the new module's name starts with ``_`` (a proxy's), so a listing that skips such names misses it.

    `elsewhere`: `listed_elsewhere`'s folders, read from the source tree, own-folder listings included; where it is
    None, `read_init(path)` (the text of the tree-relative `__init__.py` at `path`, None where there is none) is
    asked up the package chain from `folder` until a folder without one. A variant's tree transforms pass the
    source's: its `__init__` files may have been rewritten before (constant-externalization's loader reads a JSON
    file beside `__file__`, which, with astroid 2.13's `iterdir()` there, looked like a listing of its own
    folder and refused all of astroid in the stacked variant)."""
    for listed, (why, recursive, skips_private) in (elsewhere or {}).items():
        if private and skips_private:
            continue
        if folder == listed or (recursive and folder.startswith(f"{listed}/" if listed else "")):
            return f"{listed or '.'}: {why}"
    here = PurePosixPath(folder)
    framework = FRAMEWORK_LISTED.get((here.parent.name, here.name)) or FRAMEWORK_LISTED.get((None, here.name))
    if here.parts and framework:
        return f"{folder}: {framework}"
    while elsewhere is None:
        init = (here / "__init__.py").as_posix()
        text = read_init(init)
        if text is None:
            return None
        if found := lists_own_folder(text):
            return f"{init} {found}"
        if not here.parts:
            return None
        here = here.parent
    return None
