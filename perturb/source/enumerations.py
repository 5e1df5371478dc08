"""Which classes some code lists the members of (dead-method's `enumerated` refusal), read off the whole tree.

`dir(C)`, `vars(obj)` with `obj = C(...)` in the same function or at module level, `self.__dict__` and
`dir(type(self))` in C's own methods, `inspect.getmembers(C)`, `X.__class__.__dict__`. A listed name the module
imports is followed to the instance it names: sympy's ``test_predicates`` lists ``Q.__class__.__dict__``, and ``Q =
AssumptionKeys()`` in ``sympy/assumptions/ask.py`` (dead-method's method there had become one more predicate).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from repoanchor.perturb.source.sourcefile import parsed_quietly
from repoanchor.perturb.speed.bigstack import map_chunks
from repoanchor.perturb.speed.gcpause import cyclic_gc_deferred


def parsed_files(root: Path, files: list[str], wanted=lambda source: True):
    """(source, ast) of each file that `wanted(source)` and that parses; the others are reported as skipped
    by the engine where it matters."""
    for rel in files:
        source = (root / rel).read_bytes()
        if not wanted(source):
            continue
        if (tree := parsed_quietly(source)) is not None:
            yield source, tree


def last_name(expr: ast.expr) -> str | None:
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

    def __init__(self, tree: ast.AST) -> None:
        self.found: set[str] = set()
        self.classes: list[str] = []
        self.instances: list[dict[str, str]] = [{}]
        body = getattr(tree, "body", [])  # module-level instances, seen from functions defined above them too
        self.module_made = {
            t.id: made
            for s in body
            if isinstance(s, ast.Assign) and (made := _made(s))
            for t in s.targets
            if isinstance(t, ast.Name)
        }
        self.imported = {  # a relative import keeps the dotted path it names (`from . import Q`: none, so anywhere)
            a.asname or a.name: f"{n.module or ''}.{a.name}"
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and (n.module or n.level)
            for a in n.names
        }
        self.imported.update(
            (a.asname, a.name) if a.asname else (a.name.partition(".")[0],) * 2
            for n in ast.walk(tree)
            if isinstance(n, ast.Import)
            for a in n.names
        )
        self.module_aliases = {  # `Q = keys.Q` at module level, `keys` imported: where Q is made
            t.id: path
            for s in body
            if isinstance(s, ast.Assign) and (path := self._imported_path(s.value))
            for t in s.targets
            if isinstance(t, ast.Name)
        }

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
        made = _made(node)
        for target in node.targets:
            if made and isinstance(target, ast.Name):
                self.instances[-1][target.id] = made
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if last_name(node.func) in ENUMERATORS and node.args:
            self._listed(node.args[0])
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "__dict__":
            self._listed(node.value)
        self.generic_visit(node)

    def _listed(self, expr: ast.expr) -> None:
        own = self.classes[-1] if self.classes else None
        if isinstance(expr, ast.Call) and last_name(expr.func) == "type":  # type(self)
            expr = expr.args[0] if expr.args else expr
        if isinstance(expr, ast.Attribute) and expr.attr == "__class__":  # self.__class__
            expr = expr.value
        if isinstance(expr, ast.Name) and expr.id in ("self", "cls") and own:
            self.found.add(own)
        elif isinstance(expr, ast.Name):
            made = self.instances[-1].get(expr.id) or self.module_made.get(expr.id)
            self.found.add(made or expr.id)
            path = self.imported.get(expr.id) or self.module_aliases.get(expr.id)
            if made is None and path:  # an instance made elsewhere: resolved across the tree
                self.found.add(IMPORTED + path)
        elif (name := last_name(expr)) is not None:
            self.found.add(name)
            if path := self._imported_path(expr):  # `keys.Q`, `keys` imported
                self.found.add(IMPORTED + path)

    def _imported_path(self, expr: ast.expr) -> str | None:
        """``pkg.keys.Q`` for an attribute chain ``keys.Q`` whose first name the module imports (`keys`)."""
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not parts or not isinstance(expr, ast.Name) or expr.id not in self.imported:
            return None
        return ".".join([self.imported[expr.id], *reversed(parts)])


def _made(node: ast.Assign) -> str | None:
    return last_name(node.value.func) if isinstance(node.value, ast.Call) else None


IMPORTED = ">"
"""Marks a listed name a module imports (``>sympy.assumptions.Q``): `instance_classes` finds the class it is made of."""
_INSTANCE = rb"^%s[ \t]*=[ \t]*(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*)\("


def instance_classes(root: Path, every: list[str], enumerated: set[str]) -> set[str]:
    """`enumerated` with each imported name (`IMPORTED`) replaced by the class its module-level instance is made of,
    in the module it is imported from or the package's files below it: sympy's ``test_predicates`` lists
    ``Q.__class__.__dict__``, ``Q = AssumptionKeys()`` in ``sympy/assumptions/ask.py``, re-exported by the package.
    A module a relative import names is matched wherever its dotted path ends a file's (``from .ask import Q``: any
    ``ask.py`` or ``ask/``); ``from . import Q`` names none, so every file is read. Each file is read once."""
    resolved = {name for name in enumerated if not name.startswith(IMPORTED)}
    texts: dict[str, bytes] = {}
    for ref in sorted(enumerated - resolved):
        module, _, name = ref[len(IMPORTED) :].rpartition(".")
        if not module and not ref.startswith(IMPORTED + "."):
            continue  # `import numpy` then `vars(numpy)`: a module's own members, no instance to find
        pattern = re.compile(_INSTANCE % re.escape(name.encode()), re.MULTILINE)
        for rel in _module_files(every, module.replace(".", "/")):
            if rel not in texts:
                texts[rel] = (root / rel).read_bytes()
            resolved.update(m.group(1).decode() for m in pattern.finditer(texts[rel]))
    return resolved


def _module_files(every: list[str], folder: str) -> list[str]:
    """The files of a module or package `folder` ("pkg/keys"), wherever in the tree its path ends; every file for ""."""
    if not folder:
        return every
    return [
        rel
        for rel in every
        if rel.startswith((f"{folder}/", f"{folder}.py")) or f"/{folder}/" in rel or rel.endswith(f"/{folder}.py")
    ]


def enumerated_classes(tree: ast.AST) -> set[str]:
    """The classes whose members code in `tree` lists (see `_Enumerations`); a generic helper's `vars(obj)`
    on an unknown object names no class (an accepted risk: it could be any)."""
    visitor = _Enumerations(tree)
    visitor.visit(tree)
    return visitor.found


def enumeration_index(root: Path, indexed: list[str], every: list[str], workers: int = 1) -> set[str]:
    """`enumerated_classes` over the tree's other Python files (`every`: tests included, a test may walk a class);
    `indexed` were already read by `class_index`."""
    others = sorted(set(every) - set(indexed))
    others = [rel for rel in others if may_enumerate((root / rel).read_bytes())]
    return set().union(*map_chunks(_enumerations_in, others, workers, root))


def _enumerations_in(files: list[str], root: Path) -> set[str]:
    with cyclic_gc_deferred():
        return set().union(*(enumerated_classes(tree) for _, tree in parsed_files(root, files)))
