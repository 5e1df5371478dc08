"""Whole-project facts a file-local transformation needs: supported Pythons, a class index."""

from __future__ import annotations

import ast
import configparser
import re
import sys
import warnings
from pathlib import Path

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.source.files import python_files

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_MIN_PYTHON = (3, 8)
_LOWER_BOUND = re.compile(r"(>=|~=|>|==)\s*3\.(\d+)")
_SETUP_PY = re.compile(r"python_requires\s*=\s*['\"]([^'\"]+)['\"]")


def min_python(root: Path) -> tuple[int, int]:
    """The oldest Python 3 the project declares (pyproject, setup.cfg, setup.py), else 3.8."""
    spec = _requires_python(root)
    if spec:
        bounds = [(op, int(minor)) for op, minor in _LOWER_BOUND.findall(spec)]
        if bounds:
            minor = min(m + (1 if op == ">" else 0) for op, m in bounds)
            return (3, minor)
    return DEFAULT_MIN_PYTHON


def _requires_python(root: Path) -> str | None:
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            spec = tomllib.loads(pyproject.read_text()).get("project", {}).get("requires-python")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            spec = None
        if spec:
            return spec
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(setup_cfg)
            spec = parser.get("options", "python_requires", fallback=None)
        except configparser.Error:
            spec = None
        if spec:
            return spec
    setup_py = root / "setup.py"
    if setup_py.is_file():
        match = _SETUP_PY.search(setup_py.read_text(errors="replace"))
        if match:
            return match.group(1)
    return None


def _parsed(root: Path, files: list[str], wanted=lambda source: True):
    """(source, ast) of each file that `wanted(source)` and that parses; the others are reported as skipped
    by the engine where it matters."""
    for rel in files:
        source = (root / rel).read_bytes()
        if not wanted(source):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield source, ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue


def class_index(root: Path, files: list[str]) -> tuple[dict[str, set[str]], dict[str, list[str]], set[str]]:
    """Class name -> member names and base names over `files` (same-named classes are merged), and the classes
    whose members those files list (`enumerated_classes`), from one parse of each file."""
    members: dict[str, set[str]] = {}
    bases: dict[str, list[str]] = {}
    enumerated: set[str] = set()
    for source, tree in _parsed(root, files):
        enumerated |= enumerated_classes(tree) if may_enumerate(source) else set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                members.setdefault(node.name, set()).update(_body_names(node.body))
                known = bases.setdefault(node.name, [])
                known.extend(b for b in (_last_name(e) for e in node.bases) if b and b not in known)
    return members, bases, enumerated


def _body_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.If, ast.Try)):
            names.update(_body_names(stmt.body + getattr(stmt, "orelse", [])))
    return names


def _last_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


ENUMERATORS = frozenset({"dir", "vars", "getmembers", "getmembers_static"})
"""Calls that list an object's members (builtins and `inspect`'s); `X.__dict__` is the other way."""
_ENUMERATION_WORDS = re.compile(rb"\b(?:%s)\b|__dict__" % b"|".join(n.encode() for n in sorted(ENUMERATORS)))


def may_enumerate(source: bytes | str) -> bool:
    """False only when no code in `source` can list members: it spells none of `ENUMERATORS` as a word nor
    `__dict__`, so `enumerated_classes` would find nothing (most files: they need no parse and no walk).
    Non-ASCII text is always read: identifiers are NFKC-normalised, so other characters can spell `dir`."""
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    return not data.isascii() or _ENUMERATION_WORDS.search(data) is not None


class _Enumerations(ast.NodeVisitor):
    """Names of the classes whose members are listed: `dir(C)`, `vars(obj)` with `obj = C(...)` in the same
    function, `self.__dict__`/`dir(type(self))` in C's own methods, `inspect.getmembers(C)`..."""

    def __init__(self) -> None:
        self.found: set[str] = set()
        self.classes: list[str] = []
        self.instances: list[dict[str, str]] = [{}]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.instances.append({})
        self.generic_visit(node)
        self.instances.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign) -> None:
        made = _last_name(node.value.func) if isinstance(node.value, ast.Call) else None
        for target in node.targets:
            if made and isinstance(target, ast.Name):
                self.instances[-1][target.id] = made
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if _last_name(node.func) in ENUMERATORS and node.args:
            self._listed(node.args[0])
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "__dict__":
            self._listed(node.value)
        self.generic_visit(node)

    def _listed(self, expr: ast.expr) -> None:
        own = self.classes[-1] if self.classes else None
        if isinstance(expr, ast.Call) and _last_name(expr.func) == "type":  # type(self)
            expr = expr.args[0] if expr.args else expr
        if isinstance(expr, ast.Attribute) and expr.attr == "__class__":  # self.__class__
            expr = expr.value
        if isinstance(expr, ast.Name) and expr.id in ("self", "cls") and own:
            self.found.add(own)
        elif isinstance(expr, ast.Name):
            self.found.add(self.instances[-1].get(expr.id, expr.id))
        elif (name := _last_name(expr)) is not None:
            self.found.add(name)


def enumerated_classes(tree: ast.AST) -> set[str]:
    """The classes whose members code in `tree` lists (see `_Enumerations`); a generic helper's `vars(obj)`
    on an unknown object names no class (an accepted risk: it could be any)."""
    visitor = _Enumerations()
    visitor.visit(tree)
    return visitor.found


def enumeration_index(root: Path, indexed: list[str]) -> set[str]:
    """`enumerated_classes` over the tree's other Python files (tests included: a test may walk a class);
    `indexed` were already read by `class_index`."""
    others = sorted(set(python_files(root, include_tests=True, include_build=True)[0]) - set(indexed))
    return set().union(*(enumerated_classes(tree) for _, tree in _parsed(root, others, may_enumerate)))


def project_info(root: Path, files: list[str], *, index_classes: bool, python: str | None = None) -> ProjectInfo:
    """`python` ("3.9"): the one interpreter the variant must run under, instead of the declared minimum."""
    info = ProjectInfo(min_python=tuple(map(int, python.split(".")[:2])) if python else min_python(root))
    if index_classes:
        info.class_members, info.class_bases, enumerated = class_index(root, files)
        info.enumerated = enumerated | enumeration_index(root, files)
    return info
