"""The names each function binds and where they occur, in one walk: what local-rename asks of scopes.

LibCST's ScopeProvider builds Scope, Assignment and Access objects for every name of a module and then
resolves each access, which costs more than the parse itself; local-rename only needs, per function,
the names its own scope binds (and how), every Name spelling them in that scope and in the scopes nested
inside it, and whether a nested scope binds them again. Python's rules decide which scope an expression is
evaluated in: a function's decorators, defaults, annotations and return annotation in the enclosing
scope, its body in its own; a class's bases and keywords outside, its body inside; a comprehension's
first iterable outside, the rest inside (a walrus there is recorded in the comprehension's scope, which
local-rename refuses anyway). Names that are never variables (an attribute's name, a keyword argument's
name, import paths, ``global``/``nonlocal`` lists, match keyword keys) are not occurrences.

Strings that a type checker reads as code (inside an annotation, a ``typing`` subscript, or the first
argument of ``cast``/``TypeVar``/``NewType``) are not parsed: every identifier-shaped word in them counts,
a superset of LibCST's reading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from repoanchor.perturb.speed.literals import string_value
from repoanchor.perturb.speed.name_rules import RULES, typing_imports
from repoanchor.perturb.traversal.walk import children

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass(eq=False)
class Binding:
    kind: str
    """"Name" for a plain target, "capture" for a match capture, else the binding node's type
    ("Param", "Import", "ImportFrom", "FunctionDef", "ClassDef", "TypeVar", ...)."""
    node: cst.CSTNode
    """The Name spelling it (plain targets, captures), else the binding node itself."""
    order: int
    """Its place in source order among the module's names."""


@dataclass(eq=False)
class NameScope:
    node: cst.CSTNode
    path: tuple[str, ...]
    """Names of the enclosing functions and classes, this one's included (a site's label)."""
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    occurrences: dict[str, list[cst.Name]] = field(default_factory=dict)
    hinted: set[str] = field(default_factory=set)
    """Words of the type-hint strings evaluated in this scope."""
    strings: list[cst.SimpleString] = field(default_factory=list)
    """The other string literals evaluated in this scope, docstrings aside (an API may read a local by name from
    one: `perturb/source/named_in_strings.py`)."""
    declared: set[str] = field(default_factory=set)
    """Names this scope declares ``global`` or ``nonlocal``: bound elsewhere, not here."""
    nested: list[NameScope] = field(default_factory=list)
    introspection: str | None = None
    """For a function: the first call or attribute under its node that can observe local names."""

    def bind(self, name: str, kind: str, node: cst.CSTNode, order: int) -> None:
        self.bindings.setdefault(name, []).append(Binding(kind, node, order))

    def inner(self) -> list[NameScope]:
        """Every scope nested in this one, at any depth."""
        found, stack = [], list(self.nested)
        while stack:
            scope = stack.pop()
            found.append(scope)
            stack.extend(scope.nested)
        return found


@dataclass
class ModuleNames:
    functions: list[NameScope]
    """Function scopes in pre-order (the order a visitor enters their ``def``)."""
    declared: set[str]
    """Names declared ``global`` or ``nonlocal`` anywhere in the module."""
    self_documenting: set[int]
    """id() of the Names inside ``{...=}`` f-string fields."""


def function_names(module: cst.Module) -> ModuleNames:
    walker = _Walker(typing_imports(module))
    walker.block(module.body, NameScope(module, ()))
    return ModuleNames(walker.functions, walker.declared, walker.self_documenting)


class _Walker:
    def __init__(self, typing_imports: tuple[frozenset[str], frozenset[str]]) -> None:
        self.typing_names, self.typing_modules = typing_imports
        self.functions: list[NameScope] = []
        self.declared: set[str] = set()
        self.self_documenting: set[int] = set()
        self.order = 0
        self.hint = 0
        self.selfdoc = 0
        self.open_functions: list[NameScope] = []
        """Functions whose ``def`` (decorators and defaults included) encloses the current node."""
        self.docstrings: set[int] = set()
        """id() of the functions' docstring literals."""

    def block(self, nodes, scope: NameScope) -> None:
        for node in nodes:
            self.visit(node, scope)

    def visit(self, node: cst.CSTNode, scope: NameScope) -> None:
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, scope)
        else:
            for child in children(node, "pruned"):
                self.visit(child, scope)

    def tick(self) -> int:
        self.order += 1
        return self.order

    def name(self, node: cst.Name, scope: NameScope) -> None:
        self.tick()
        scope.occurrences.setdefault(node.value, []).append(node)
        if self.selfdoc:
            self.self_documenting.add(id(node))

    def target(self, node: cst.CSTNode, scope: NameScope, kind: str = "Name") -> None:
        """A binding target: names in it bind, an attribute's object or a subscript is read."""
        if type(node) is cst.Name:
            self.name(node, scope)
            scope.bind(node.value, kind, node, self.order)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self.target(element.value, scope, kind)
        elif isinstance(node, cst.StarredElement):
            self.target(node.value, scope, kind)
        else:
            self.visit(node, scope)

    def typing_member(self, node: cst.CSTNode) -> bool:
        """`node` names something of ``typing`` (imported from it, or an attribute of the module)."""
        if type(node) is cst.Name:
            return node.value in self.typing_names
        return type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value in self.typing_modules

    def found_introspection(self, what: str) -> None:
        for function in self.open_functions:
            function.introspection = function.introspection or what

    def hinted(self, node: cst.CSTNode, scope: NameScope) -> None:
        self.hint += 1
        self.visit(node, scope)
        self.hint -= 1

    def string(self, node: cst.SimpleString | cst.ConcatenatedString, scope: NameScope) -> None:
        if self.hint:
            value = string_value(node)
            if isinstance(value, str):
                scope.hinted.update(_WORD.findall(value))
        elif type(node) is cst.SimpleString:
            if id(node) not in self.docstrings:
                scope.strings.append(node)
        else:
            for child in children(node, "pruned"):
                self.visit(child, scope)

    def function(self, node: cst.FunctionDef, scope: NameScope) -> None:
        inner = NameScope(node, (*scope.path, node.name.value))
        self.functions.append(inner)
        self.open_functions.append(inner)
        self.block(node.decorators, scope)
        scope.bind(node.name.value, "FunctionDef", node, self.tick())
        if node.type_parameters:
            self.type_parameters(node.type_parameters, inner)
        self.parameters(node.params, scope, inner)
        if node.returns:
            self.hinted(node.returns, scope)
        if docstring := _docstring(node.body):
            self.docstrings.add(id(docstring))
        self.visit(node.body, inner)
        self.open_functions.pop()
        scope.nested.append(inner)

    def parameters(self, params: cst.Parameters, outer: NameScope, inner: NameScope) -> None:
        every = (*params.posonly_params, *params.params, params.star_arg, *params.kwonly_params, params.star_kwarg)
        for param in every:
            if isinstance(param, cst.Param):
                self.name(param.name, inner)
                inner.bind(param.name.value, "Param", param, self.order)
                if param.annotation:
                    self.hinted(param.annotation, outer)
                if param.default:
                    self.visit(param.default, outer)

    def type_parameters(self, node: cst.TypeParameters, scope: NameScope) -> None:
        for parameter in node.params:
            inner = parameter.param
            scope.bind(inner.name.value, type(inner).__name__, inner, self.tick())
            bound = getattr(inner, "bound", None)
            if bound:
                self.hinted(bound, scope)

    def lambda_(self, node: cst.Lambda, scope: NameScope) -> None:
        inner = NameScope(node, scope.path)
        self.parameters(node.params, scope, inner)
        self.visit(node.body, inner)
        scope.nested.append(inner)

    def class_(self, node: cst.ClassDef, scope: NameScope) -> None:
        self.block(node.decorators, scope)
        scope.bind(node.name.value, "ClassDef", node, self.tick())
        inner = NameScope(node, (*scope.path, node.name.value))
        if node.type_parameters:
            self.type_parameters(node.type_parameters, inner)
        self.block(node.bases, scope)
        self.block(node.keywords, scope)
        self.visit(node.body, inner)
        scope.nested.append(inner)

    def comprehension(self, node, scope: NameScope) -> None:
        inner = NameScope(node, scope.path)
        heads = (node.key, node.value) if type(node) is cst.DictComp else (node.elt,)
        self.block(heads, inner)
        comp, first = node.for_in, True
        while comp is not None:
            self.target(comp.target, inner)
            self.visit(comp.iter, scope if first else inner)
            self.block(comp.ifs, inner)
            comp, first = comp.inner_for_in, False
        scope.nested.append(inner)


def _docstring(body: cst.BaseSuite) -> cst.SimpleString | None:
    """A function's docstring literal (a plain string as its first statement), if it has one."""
    statements = body.body
    first = statements[0] if statements else None
    if isinstance(first, cst.SimpleStatementLine):
        first = first.body[0] if first.body else None
    value = first.value if isinstance(first, cst.Expr) else None
    return value if type(value) is cst.SimpleString else None


_HANDLERS = {
    cst.Name: _Walker.name,
    cst.FunctionDef: _Walker.function,
    cst.ClassDef: _Walker.class_,
    cst.Lambda: _Walker.lambda_,
    **dict.fromkeys(_COMPREHENSIONS, _Walker.comprehension),
    cst.SimpleString: _Walker.string,
    cst.ConcatenatedString: _Walker.string,
    **RULES,
}
