"""Which import statements of a module can be routed through proxies, and what each one binds.

A statement is decomposed into `Binding`s, one per name it binds, each with the *leaf
statement*: the original import restricted to that one name (``from ..x import a as b`` stays
exactly that, relative or absolute). The target keeps binding the same local name, so module
attributes (``mod.os``), re-exports and ``mock.patch`` targets are unchanged. Refused, with a
reason: ``from __future__`` (must stay first and is a compiler directive), ``import *`` (the
names it binds are only known at run time, and a star-import ignores module ``__getattr__``, so
no proxy can forward them), imports under ``if TYPE_CHECKING:`` (never run; a proxy would only
blind type checkers), imports inside a function (they run at each call: re-importing a loaded module
never reaches importlib's Python code, but a chain's first call imports new modules, under whatever
import state the caller set; astroid's tests patch ``sys.modules`` around such a call), names that
would shadow the machinery of the proxy module itself, private ``__names`` (mangled in class bodies),
a name bound twice by one statement, and relative imports where no package exists.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from repoanchor.perturb.bindings import dotted_name
from repoanchor.perturb.sites import Site, SiteCollector
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.traversal.walk import walk

MODULE_MACHINERY = frozenset(
    {
        "__name__", "__doc__", "__package__", "__loader__", "__spec__", "__file__", "__cached__",
        "__builtins__", "__path__", "__getattr__", "__dir__", "__dict__", "__class__", "__all__",
        "__annotations__", "__module__", "AttributeError",
    }
)  # fmt: skip
OBJECT_METHODS = frozenset(
    {
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__", "__str__", "__format__",
        "__init__", "__new__", "__init_subclass__", "__subclasshook__", "__setattr__", "__delattr__",
        "__getattribute__", "__reduce__", "__reduce_ex__", "__sizeof__", "__getstate__",
    }
)  # fmt: skip
"""What every module object answers itself, from ``object`` (``__getstate__`` since 3.11): ``from proxy import __ne__``
gets the proxy module's own bound ``__ne__``, never its ``__getattr__`` (attrs' `_cmp.py` imports `_make.__ne__`)."""
RESERVED = MODULE_MACHINERY | OBJECT_METHODS
"""A proxy finds names through module ``__getattr__``, which only runs for names the module
lacks; it also calls AttributeError. A binding with one of these names could not be forwarded."""


@dataclass(frozen=True)
class Binding:
    local: str
    """The name the statement binds in the target (and the name every proxy forwards)."""
    leaf: str
    """The original import restricted to this name, as the leaf proxy executes it."""


class ImportScan(SiteCollector):
    """Candidate import statements (sites with ``bindings`` and ``text``) and refusals (where, reason)."""

    def __init__(self, in_package: bool) -> None:
        super().__init__()
        self.in_package = in_package
        self.refusals: list[tuple[str, str]] = []
        self._type_checking: set[int] = set()

    def visit_If(self, node: cst.If) -> None:
        if (dotted_name(node.test) or "").split(".")[-1] == "TYPE_CHECKING":
            finder = _ImportFinder()
            walk(finder, node.body)
            self._type_checking.update(map(id, finder.found))

    def visit_Import(self, node: cst.Import) -> bool:
        self._consider(node)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        self._consider(node)
        return False

    def _consider(self, node: cst.Import | cst.ImportFrom) -> None:
        where = self.label(node)
        bindings = self._bindings(node)
        if isinstance(bindings, str):
            self.refusals.append((where, bindings))
        else:
            site = Site(node, where, {"bindings": bindings, "text": statement_text(node)}, tuple(self.ancestors))
            self.sites.append(site)

    def _bindings(self, node: cst.Import | cst.ImportFrom) -> list[Binding] | str:
        """The statement's bindings, or the reason it is refused."""
        if id(node) in self._type_checking:
            return "type-checking-only: runs only under a type checker; a proxy would only hide the types"
        if isinstance(node, cst.Import):
            found = [_plain_binding(alias) for alias in node.names]
        else:
            found = _from_bindings(node, self.in_package)
        if isinstance(found, str):
            return found
        if any(type(ancestor) is cst.FunctionDef for ancestor in self.ancestors):
            return "call-time-import: runs at each call, where a proxy chain would import new modules"
        if any(binding is None for binding in found):
            return "unsupported-name: an imported name is not a plain dotted name"
        locals_ = [binding.local for binding in found]
        if len(set(locals_)) < len(locals_):
            return "duplicate-binding: the statement binds one name twice; each name needs its own forward"
        reserved = sorted(set(locals_) & RESERVED)
        if reserved:
            return f"reserved-name: {', '.join(reserved)} would be shadowed by the proxy module's own attributes"
        if any(part.startswith("__") and not part.endswith("__") for b in found for part in _words(b.leaf)):
            return "mangled-name: a private __name is mangled inside a class body, a proxy could not forward it"
        return found


def _plain_binding(alias: cst.ImportAlias) -> Binding | None:
    dotted = dotted_name(alias.name)
    if dotted is None:
        return None
    local = _asname(alias) or dotted.split(".")[0]
    return Binding(local, f"import {dotted}" + (f" as {local}" if alias.asname else ""))


def _from_bindings(node: cst.ImportFrom, in_package: bool) -> list[Binding | None] | str:
    source = dotted_name(node.module) if node.module is not None else ""
    if source is None:
        return "unsupported-name: the module is not a plain dotted name"
    if source == "__future__" and not node.relative:
        return "future-import: a compiler directive that must stay the module's first statement"
    if isinstance(node.names, cst.ImportStar):
        return (
            "star-import: the names it binds are only known at run time (the source's __all__ or "
            "public names), and a star-import ignores module __getattr__, so no proxy can forward them"
        )
    if node.relative and not in_package:
        return "invalid-relative: a relative import in a module that is not part of a package"
    prefix = f"from {'.' * len(node.relative)}{source} import "
    found: list[Binding | None] = []
    for alias in node.names:
        name = dotted_name(alias.name)
        local = _asname(alias) or name
        found.append(Binding(local, prefix + name + (f" as {local}" if alias.asname else "")) if name else None)
    return found


def _words(statement: str) -> list[str]:
    return statement.replace(".", " ").replace(",", " ").split()


def _asname(alias: cst.ImportAlias) -> str | None:
    if alias.asname is None:
        return None
    name = alias.asname.name
    return name.value if isinstance(name, cst.Name) else None


def statement_text(node: cst.Import | cst.ImportFrom) -> str:
    """The statement as written, without a separating semicolon (for metadata)."""
    return code_for_node(node.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)).strip()


class _ImportFinder:
    def __init__(self) -> None:
        self.found: list[cst.CSTNode] = []

    def visit_Import(self, node: cst.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.found.append(node)


def has_relative_import(module: cst.Module) -> bool:
    """Whether a relative import runs whenever the module runs, proving it runs inside its package: one at the
    top level, in a class body, or in the body of a ``try`` none of whose handlers can catch its failure.

    One under an ``if`` (``TYPE_CHECKING``, a version test) may never run, and one whose failure is caught was
    written for the module to run without its package too: tabulate's ``__init__`` has ``try: from .version
    import ...`` / ``except ImportError: pass`` because its tests run ``python tabulate/__init__.py``."""
    return _block_runs_relative_import(module.body)


def _block_runs_relative_import(body: Sequence[cst.BaseStatement]) -> bool:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            if any(isinstance(small, cst.ImportFrom) and small.relative for small in statement.body):
                return True
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            if _block_runs_relative_import(statement.body.body):
                return True
        elif isinstance(statement, cst.Try) and not any(_may_catch_import_error(h) for h in statement.handlers):
            if isinstance(statement.body, cst.IndentedBlock) and _block_runs_relative_import(statement.body.body):
                return True
    return False


_NOT_IMPORT_ERRORS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException) and not issubclass(ImportError, value)
)
"""Builtin exceptions an ``except`` naming them cannot catch an ImportError with (any other name might be one)."""


def _may_catch_import_error(handler: cst.ExceptHandler) -> bool:
    """A bare ``except``, or one naming anything but builtin exceptions unrelated to ImportError."""
    if handler.type is None:
        return True
    kinds = (
        [element.value for element in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    )
    return not all(isinstance(kind, cst.Name) and kind.value in _NOT_IMPORT_ERRORS for kind in kinds)


def scan(module: cst.Module, in_package: bool) -> tuple[list[Site], list[tuple[str, str]]]:
    """Candidate statements of `module` (in source order) and the refused ones with reasons."""
    collector = ImportScan(in_package)
    collector.collect(module)
    return collector.sites, collector.refusals
