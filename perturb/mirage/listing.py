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
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

FRAMEWORK_LISTED = {
    ("management", "commands"): "Django lists its modules as management commands",
    (None, "templatetags"): "Django lists its modules as template libraries",
}
"""(parent folder name or None for any, folder name) -> what lists the folder's modules."""
_NOT_OWN_LISTING = re.compile(r"^.*\b(extend_path|find_commands|make_test_runner_in)\(.*$", re.MULTILINE)
_PATH_READ = re.compile(r"(?<![\w.])__path__(?!\s*(?:=|\+=)(?!=))")
_FILE = re.compile(r"(?<![\w.])__file__\b")
_LISTING = re.compile(r"\b(listdir|scandir|iterdir|glob|iglob|iter_modules|walk_packages|walk)\s*\(")


def lists_own_folder(init_text: str) -> str | None:
    """How a package's `__init__.py` (its text) reaches its own folder's listing, or None."""
    if _PATH_READ.search(_NOT_OWN_LISTING.sub("", init_text)):
        return "reads __path__ (its own folder)"
    listing = _LISTING.search(init_text)
    if listing and _FILE.search(init_text):
        return f"lists files ({listing.group(1)}) beside __file__"
    return None


def listed_folder(folder: str, read_init: Callable[[str], str | None]) -> str | None:
    """Why a new module in `folder` (tree-relative, "" for the root) would be found by a listing, or None.

    `read_init(path)`: the text of the tree-relative `__init__.py` at `path`, None where there is none; the
    package chain is walked up from `folder` until a folder without one."""
    here = PurePosixPath(folder)
    framework = FRAMEWORK_LISTED.get((here.parent.name, here.name)) or FRAMEWORK_LISTED.get((None, here.name))
    if here.parts and framework:
        return f"{folder}: {framework}"
    while True:
        init = (here / "__init__.py").as_posix()
        text = read_init(init)
        if text is None:
            return None
        if found := lists_own_folder(text):
            return f"{init} {found}"
        if not here.parts:
            return None
        here = here.parent
