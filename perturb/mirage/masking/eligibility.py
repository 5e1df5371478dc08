"""Which modules runtime-target masking may move, and the stable reason class when it may not.

Masking turns ``pkg/mod.py`` into a forwarder, so anything that reaches the module *as a file*
rather than by importing it would break; those uses are found statically and the module is
refused. One survey of the tree (`survey_tree`) answers the questions for every module:

- ``package-init``: an ``__init__.py`` is the package's own module. Its hidden body would sit
  among the package's submodules, so ``pkgutil`` would list it and an import-everything loop
  would run the whole package ``__init__`` a second time as a submodule, and the decoy folder
  would be named ``__init__``; the spec would also have to be rebuilt as a package spec. Not
  worth the risk for the one module every import of the package runs.
- ``script-module``: ``__main__.py``, which runs the program when imported: its hidden twin
  would be listed as an ordinary module, so a loop that imports every module but skips
  ``__main__`` would start the program. And a ``#!`` first line: the file is meant to run as a program
  (``./pkg/mod.py``), which the forwarder, with no ``#!`` line of its own, is not. Running with ``-m``,
  ``runpy.run_module``, by path (``python pkg/mod.py``) or ``runpy.run_path`` works (the forwarder runs the code as
  ``__main__``; `forwarder`), so a plain ``if __name__ == "__main__":`` block is no reason to refuse: on import it
  stays dormant exactly as before, run it fires as before.
- ``path-referenced``: ``pkg/mod.py`` appears in a project file (versioneer's
  ``versionfile_source``, manifests, tests opening the source, CI scripts running it by path):
  that file now holds the forwarder. Links to a forge (``https://...``) and generated file lists
  (``*.egg-info/SOURCES.txt``) do not count.
- ``no-package``: the folder has no ``__init__.py`` (top-level script, ``setup.py``, docs, a
  namespace portion or a ``sys.path`` root). Decided: refused. The forwarder itself would work
  (it computes everything from ``__spec__`` and ``__file__``), but the hidden module would become
  a *top-level* name, able to shadow a same-named distribution for every program on that path,
  and most such files are scripts run by path.
- ``listed-package``: something lists the module's folder at run time (an ``__init__.py`` of its package
  or one above it lists its own folder, plugin discovery as pylint's checkers; another module globs it, as
  sqlfluff's rule loader; Django's
  ``management/commands``: `perturb.mirage.listing`): the hidden twin would be found and run a second time.
- ``stem-folder-exists`` (the decoy folder ``pkg/mod/`` is already there), ``shadowed-module``
  (``mod.so``/``mod.pyd`` beside ``mod.py``: the importer loads the extension, so ``mod.py`` is
  not the runtime target), ``not-importable-name``, ``symlink`` (the module is a link, lies
  under one, or a link points at it: loaded through the link, the forwarder would look for its
  sibling under the link's name), ``doctest-collection`` (the project's pytest config
  imports every file with ``--doctest-modules``, which would import the decoys).
- ``importer-frame``: the module's top-level code looks at the frame that imports it (a deprecation
  ``warnings.warn(..., stacklevel=2)``): run by the forwarder, that frame is the forwarder's (`importer_frame`).
"""

from __future__ import annotations

import keyword
import os
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath

from repoanchor.perturb.mirage.importer_frame import importer_frame_read
from repoanchor.perturb.mirage.listing import Elsewhere, listed_folder
from repoanchor.perturb.source.files import NEVER_COPY

TEXT_SUFFIXES = frozenset(
    ".py .pyi .pyx .cfg .toml .ini .txt .in .yml .yaml .sh .bat .ps1 .rst .md .json .spec .mk".split()
)
TEXT_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "Procfile", "noxfile.py", "tox.ini"})
MAX_TEXT_BYTES = 1_000_000
PYTEST_CONFIGS = (
    "setup.cfg", "tox.ini", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "noxfile.py"
)  # fmt: skip
"""Files whose pytest options hold for every run (pytest 9 reads `pytest.toml` and pyproject's `[tool.pytest]`)."""
BUILD_RECORDS = (".egg-info", ".dist-info")
"""Generated file lists (SOURCES.txt, RECORD) name every module; they are not uses of one."""
_PATH_TAIL = re.compile(r"[/\\]([A-Za-z_]\w*)\.py(?!\w)")
"""``/stem.py``: matching from the separator keeps the scan linear (a pattern that starts with
the folder name retries at every letter of every word: 10x slower on sympy's 28 MB of text)."""
_FOLDER_BEFORE = re.compile(r"([A-Za-z_][\w.-]*)$")
_TOKEN_START = re.compile(r"[\s\"'(<\[=]")
DOCTEST_MODULES = re.compile(r"doctest[-_]modules")
"""pytest's option (or ini key) that imports every module it finds: decoys and hidden modules included."""
_SHADOW = r"{}\.(?:[\w-]+\.)?(?:so|pyd)"


@dataclass
class TreeSurvey:
    path_refs: set[tuple[str, str]] = field(default_factory=set)
    """(folder name, stem) of every ``folder/stem.py`` written in a project file."""
    linked: set[str] = field(default_factory=set)
    """Tree-relative paths some symlink in the tree points at."""
    doctest_config: str | None = None
    init_texts: dict[str, str] = field(default_factory=dict)
    """Tree-relative path -> text of every ``__init__.py`` read (what `listed_folder` asks of each module's
    packages, read once here instead of once per module)."""
    listed: dict[str, tuple[str, bool]] | None = None
    """The folders the source lists (`listing.listed_elsewhere`, as the caller read them); None: not read."""


def survey_tree(root: Path, *, pytest_options_only: bool = False, listed: Elsewhere | None = None) -> TreeSurvey:
    """Read every text file of the tree once (no symlink followed, caches skipped).

    `pytest_options_only`: a `--doctest-modules` counts only where pytest reads its options for every run
    (a [pytest]-like section), not in a tox env's or nox session's command (which a suite never runs)."""
    survey = TreeSurvey(listed=dict(listed) if listed is not None else None)
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        dirs[:] = [
            d
            for d in dirs
            if d not in NEVER_COPY and not d.endswith(BUILD_RECORDS) and not _note_link(root, here / d, survey)
        ]
        for name in files:
            path = here / name
            if _note_link(root, path, survey) or not (path.suffix in TEXT_SUFFIXES or name in TEXT_NAMES):
                continue
            text = _read(path)
            if name == "__init__.py":
                survey.init_texts[path.relative_to(root).as_posix()] = text
            if ".py" in text:
                survey.path_refs.update(path_references(text))
            options = pytest_section(name, text) if pytest_options_only else text
            if here == root and name in PYTEST_CONFIGS and DOCTEST_MODULES.search(options):
                survey.doctest_config = name
    return survey


_SECTION = re.compile(r"^\[([^\]\n]+)\][^\n]*\n(.*?)(?=^\[|\Z)", re.MULTILINE | re.DOTALL)
PYTEST_SECTIONS = {"pytest", "tool:pytest", "tool.pytest.ini_options", "tool.pytest"}
"""Where pytest reads its options: a `--doctest-modules` elsewhere (a tox env's command) is not every run's."""


def pytest_section(name: str, text: str) -> str:
    """The pytest options in config file `name`: its [pytest]-like sections (pytest.ini: all of it when it
    has no section header)."""
    sections = [body for header, body in _SECTION.findall(text) if header.strip() in PYTEST_SECTIONS]
    if name == "pytest.ini" and not _SECTION.search(text):
        return text
    return "\n".join(sections)


def path_references(text: str) -> set[tuple[str, str]]:
    """(folder, stem) of each ``folder/stem.py`` in `text`, except inside URLs: a link to the
    file on a forge (``https://github.com/.../pkg/mod.py``) is no use of the file."""
    found = set()
    for match in _PATH_TAIL.finditer(text):
        before = text[max(0, match.start() - 200) : match.start()]
        folder = _FOLDER_BEFORE.search(before)
        token = before[max((m.end() for m in _TOKEN_START.finditer(before)), default=0) :]
        if folder and "://" not in token:
            found.add((folder.group(1), match.group(1)))
    return found


def _note_link(root: Path, path: Path, survey: TreeSurvey) -> bool:
    if not path.is_symlink():
        return False
    target = Path(os.path.realpath(path))
    if target.is_relative_to(root.resolve()):
        survey.linked.add(target.relative_to(root.resolve()).as_posix())
    return True


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_TEXT_BYTES:
            return ""
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def refusal(root: Path, module: str, survey: TreeSurvey) -> str | None:
    """Why `module` (tree-relative ``.py`` path) may not be masked, or None."""
    rel = PurePosixPath(module)
    path, folder, stem = root / module, root / rel.parent, rel.stem
    if stem == "__init__":
        return "package-init: the package's own module; its hidden body would be listed among its submodules"
    if stem == "__main__":
        return "script-module: __main__.py runs the program when imported; a hidden twin would be a plain module"
    if not stem.isidentifier() or keyword.iskeyword(stem):
        return f"not-importable-name: {stem!r} is not an identifier, so the module is only run by path"
    if path.is_symlink() or not path.is_file() or path.resolve() != root.resolve() / module:
        return "symlink: the module or a folder above it is a link, so rewriting it would write through the link"
    if module in survey.linked:
        return "symlink: a link in the tree points at this module; the forwarder finds its sibling by its own name"
    if not (folder / "__init__.py").is_file():
        return "no-package: its folder has no __init__.py (script, sys.path root or namespace portion)"
    folder_rel = "" if str(rel.parent) == "." else rel.parent.as_posix()
    if listing := listed_folder(folder_rel, partial(_init_text, root, survey), survey.listed):
        return f"listed-package: {listing}; the hidden twin would be found and run again"
    if (folder / stem).exists():
        return f"stem-folder-exists: {rel.parent / stem} already exists; the decoys would go there"
    shadow = re.compile(_SHADOW.format(re.escape(stem)))
    clash = sorted(p.name for p in folder.iterdir() if shadow.fullmatch(p.name))
    if clash:
        return f"shadowed-module: the importer loads {clash[0]}, so this file is not what runs"
    return _used_as_file(root, module, survey) or _importer_frame(root / module)


def _used_as_file(root: Path, module: str, survey: TreeSurvey) -> str | None:
    rel = PurePosixPath(module)
    if survey.doctest_config:
        return f"doctest-collection: {survey.doctest_config} enables --doctest-modules, which imports every file"
    if (rel.parent.name, rel.stem) in survey.path_refs:
        return f"path-referenced: {rel.parent.name}/{rel.name} is named in a project file"
    with (root / module).open("rb") as handle:
        if handle.read(2) == b"#!":
            return "script-module: it starts with a #! line, so it is meant to run by path"
    return None


def _importer_frame(path: Path) -> str | None:
    if found := importer_frame_read(_read(path)):
        return f"importer-frame: its top-level code reads the frame importing it ({found}): the forwarder's, if masked"
    return None


def _init_text(root: Path, survey: TreeSurvey, rel: str) -> str | None:
    """The survey's text of `rel`; read here only where the survey did not (a linked ``__init__.py``)."""
    if rel in survey.init_texts:
        return survey.init_texts[rel]
    path = root / rel
    return _read(path) if path.is_file() else None
