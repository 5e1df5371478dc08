"""Which folders a module's listing calls list, with the paths followed through names: `Path(__file__).parent /
"brain"`, `os.path.join(os.path.dirname(__file__), "..", "rules")`, a name bound to either anywhere in the module,
or one imported from another module of the tree (astroid 2.13: `const.py` binds `BRAIN_MODULES_DIRECTORY =
Path(__file__).parent / "brain"`, and `__init__.py` imports every module its `iterdir()` yields).

A value is a set of tree-relative POSIX paths (a name bound in two places keeps both: scopes are not told apart,
so a listing is found more often, never less). A string alone is relative to the working folder, and a call not
listed here is opaque: neither names a folder, so nothing is refused on a guess about them.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable
from pathlib import Path

from repoanchor.perturb.mirage.module_paths import absolute_import, dotted_expression, dotted_modules, import_aliases
from repoanchor.perturb.source.sourcefile import called_name, parsed_quietly

_SAME_PATH = {"abspath", "realpath", "normpath", "resolve", "absolute", "expanduser", "fspath", "str"}
_PATH_TYPES = {"Path", "PurePath", "PosixPath", "PurePosixPath"}
_RECEIVER_LISTINGS = {"iterdir", "glob", "rglob"}
_ARGUMENT_LISTINGS = {"listdir", "scandir", "walk", "glob", "iglob"}
_PACKAGE_LISTINGS = {"iter_modules", "walk_packages"}
_RECURSIVE = {"rglob", "walk", "walk_packages"}
_LISTINGS = _RECEIVER_LISTINGS | _ARGUMENT_LISTINGS | _PACKAGE_LISTINGS
_IMPORTS_BY_NAME = {
    "import_module", "__import__", "spec_from_file_location", "load_source", "load_module", "exec_module",
    "run_path", "exec", "execfile", "SourceFileLoader",
}  # fmt: skip


class PathValues:
    """Path values of the modules of one tree, each module read and evaluated at most once."""

    def __init__(self, root: Path, files: Iterable[str], packages: set[str]) -> None:
        self._root = root
        self._modules = dotted_modules(files, packages)
        self._packages = packages
        self._names: dict[str, dict[str, set[str]]] = {}
        self._aliases: dict[str, dict[str, str]] = {}
        """Module -> {name: the dotted module it is bound to by an import}, for `__path__` values."""
        self._builds_paths: dict[str, bool] = {}

    def listed(self, rel: str, tree: ast.Module) -> dict[str, bool]:
        """Tree-relative folder -> whether the folders below it are listed too, for each listing call of module
        `rel` (its parsed `tree`) whose folder is known. A listing of files counts only in a module that also
        imports by name (`import_module`, `__import__`, `spec_from_file_location`, `exec`, ...): a plugin loader,
        not a tool that reads the sources (Sphinx's `utils/babel_runner.py` walks `sphinx/` for messages)."""
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        loads = any(called_name(call) in _IMPORTS_BY_NAME for call in calls)
        wanted = _LISTINGS if loads else _PACKAGE_LISTINGS
        listings = [call for call in calls if called_name(call) in wanted]
        if not listings:
            return {}
        env = self._env(rel, tree)
        found: dict[str, bool] = {}
        for call in listings:
            name = called_name(call)
            for folder in self._call_folders(call, name, rel, env):
                recursive = name in _RECURSIVE or any(
                    isinstance(a, ast.Constant) and "**" in str(a.value) for a in call.args
                )
                found[folder] = found.get(folder, False) or recursive
        return {folder: deep for folder, deep in found.items() if folder != ".." and not folder.startswith("../")}

    def _call_folders(self, call: ast.Call, name: str | None, rel: str, env: dict[str, set[str]]) -> set[str]:
        pattern = call.args[0] if call.args else None
        folders: set[str] = set()
        if name in _RECEIVER_LISTINGS and isinstance(call.func, ast.Attribute):
            for base in self._value(call.func.value, rel, env):
                folders |= _pattern_folders(base, pattern)
        if name in _ARGUMENT_LISTINGS and pattern is not None:
            folders |= {folder for v in self._value(pattern, rel, env) if (folder := folder_of_pattern(v)) is not None}
        if name in _PACKAGE_LISTINGS and pattern is not None:  # a list of paths, or `pkg.__path__` (or a name of it)
            for element in pattern.elts if isinstance(pattern, (ast.List, ast.Tuple)) else [pattern]:
                folders |= self._value(element, rel, env)
        return {"" if (normal := posixpath.normpath(folder)) == "." else normal for folder in folders}

    def _env(self, rel: str, tree: ast.Module | None) -> dict[str, set[str]]:
        """Name -> path values bound to it in module `rel` (its parsed `tree`, None where it does not parse):
        imported from modules of the tree, then assigned."""
        if rel in self._names:
            return self._names[rel]
        self._names[rel] = env = {}  # a cycle of imports sees the names bound so far: none
        if tree is None:
            return env
        self._aliases[rel] = import_aliases(tree, rel, self._packages)
        for node in (n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)):
            source = self._modules.get(absolute_import(node, rel, self._packages) or "")
            imported = self._imported(source) if source else {}
            for alias in node.names:
                if alias.name in imported:
                    env.setdefault(alias.asname or alias.name, set()).update(imported[alias.name])
        for target, value in sorted(_bindings(tree), key=lambda pair: (pair[0].lineno, pair[0].col_offset)):
            if values := self._value(value, rel, env):
                env.setdefault(target.id, set()).update(values)
        return env

    def _imported(self, rel: str) -> dict[str, set[str]]:
        """The path values module `rel` binds, for a module importing from it. Only a module that builds a path
        from its `__file__` is parsed for them (parsing every module a listing module imports costs a parse of
        most of sympy), so a path passed on through a module that does not build one (a re-export) is not
        followed. Each module is read once."""
        if rel not in self._builds_paths:
            try:
                data = (self._root / rel).read_bytes()
            except OSError:
                data = b""
            self._builds_paths[rel] = b"__file__" in data
            if self._builds_paths[rel] and rel not in self._names:
                return self._env(rel, parsed_quietly(data))
        return self._names.get(rel, {}) if self._builds_paths[rel] else {}

    def _value(self, node: ast.AST, rel: str, env: dict[str, set[str]]) -> set[str]:
        """The tree-relative paths `node` may evaluate to (empty where unknown)."""
        if isinstance(node, ast.Name):
            return {rel} if node.id == "__file__" else set(env.get(node.id, ()))
        if isinstance(node, ast.Attribute) and node.attr == "__path__":
            return self._package_folder(node.value, rel)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "__path__":
            return self._package_folder(node.value.value, rel)  # `pkg.__path__[0]`
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return {_up(v, 1) for v in self._value(node.value, rel, env)}
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            up = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if isinstance(up, int) and 0 <= up < 16:
                return {_up(v, up + 1) for v in self._value(node.value.value, rel, env)}
            return set()
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) and called_name(node.value) == "split":
            head = node.value.args[0] if node.value.args and _index(node) == 0 else None  # `os.path.split(p)[0]`
            return {_up(v, 1) for v in self._value(head, rel, env)} if head is not None else set()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return _joined(self._value(node.left, rel, env), [node.right])
        if isinstance(node, ast.Call):
            return self._call_value(node, rel, env)
        return set()

    def _package_folder(self, node: ast.expr, rel: str) -> set[str]:
        """The folder of the tree's package that `node` (a name or a dotted attribute of one, bound by an import of
        module `rel`) is: pyupgrade's `from pyupgrade import _plugins`, then `_plugins.__path__`."""
        dotted = dotted_expression(node)
        head, _, rest = (dotted or "").partition(".")
        module = self._aliases.get(rel, {}).get(head)
        init = self._modules.get(".".join(part for part in (module, rest) if part)) if module else None
        return {posixpath.dirname(init)} if init and init.endswith("__init__.py") else set()

    def _call_value(self, call: ast.Call, rel: str, env: dict[str, set[str]]) -> set[str]:
        name, args = called_name(call), call.args
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if name == "dirname" and args:
            return {_up(v, 1) for v in self._value(args[0], rel, env)}
        if name in _SAME_PATH | _PATH_TYPES:
            first = args[0] if args else receiver if name not in _PATH_TYPES else None
            values = self._value(first, rel, env) if first is not None else set()
            return _joined(values, args[1:]) if name in _PATH_TYPES else values
        if name == "join" and args:
            return _joined(self._value(args[0], rel, env), args[1:])
        if name == "joinpath" and receiver is not None:
            return _joined(self._value(receiver, rel, env), args)
        return set()


_PATH_CONSTANTS = {"pardir": "..", "curdir": "."}
"""`os.pardir`, `os.curdir` (and the names imported from `os` or `os.path`): sympy's `test_args.py` walks
`os.path.join(os.path.split(__file__)[0], os.pardir, os.pardir)`."""


def _index(node: ast.Subscript) -> int | None:
    return node.slice.value if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int) else None


def _part(node: ast.expr) -> str | None:
    """A path part: a string literal, `os.pardir` or `os.curdir`; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    return _PATH_CONSTANTS.get(name or "")


def _joined(bases: set[str], parts: list[ast.expr]) -> set[str]:
    """Each base with the string `parts` appended; nothing where a part is not a string literal (or os.pardir)."""
    tail = [_part(p) for p in parts]
    if None in tail:
        return set()
    return {posixpath.normpath(posixpath.join(base, *tail)) for base in bases} if tail else set(bases)


def _pattern_folders(base: str, pattern: ast.expr | None) -> set[str]:
    """The folder `base.glob(pattern)` lists modules of (`base.iterdir()`: base itself)."""
    if pattern is None:
        return {base}
    if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
        return {base}  # an unknown pattern may match modules
    folder = folder_of_pattern(posixpath.join(base, pattern.value))
    return {folder} if folder is not None else set()


def folder_of_pattern(path: str) -> str | None:
    """The folder a path or glob pattern lists: itself, a pattern's folder where it matches modules (`L*.py`,
    `*`), None for a pattern of other files (`*.json`)."""
    if "*" not in path:
        return path
    if not path.endswith((".py", "*")):
        return None
    return posixpath.dirname(path.split("*")[0] + "x")


def _up(path: str, levels: int) -> str:
    """`levels` folders up (a file's first is its folder); above the tree's root the path starts with `..`."""
    return posixpath.normpath(posixpath.join(path, *[".."] * levels))


def _bindings(tree: ast.Module) -> list[tuple[ast.Name, ast.expr]]:
    """(name, value) of every single-name assignment, in any scope."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.append((node.targets[0], node.value))
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name) and node.value:
            found.append((node.target, node.value))
    return found
