"""Sites astroid cannot prove builtin numbers, told from the file's own bindings before astroid builds the file.

Astroid's tree of a file costs about a third of a LibCST parse and emission, and most files with comparison or
arithmetic sites have no site it proves (sympy's modules: 62% of operand-permute's files, 46% of their bytes; 86%
of comparison-swap's files with no literal side, 82%). `builtin_numbers` refuses a site as soon as one leaf of an
operand infers to something other than a builtin number, and astroid's lookup of a name only ever yields bindings
the file holds (or a builtin). So an operand leaf is refused here, with no astroid, only where *every* binding of its
name anywhere in the file infers to something that is not a number, whichever of them a lookup picks:

- a parameter (not the first of a method): astroid yields its default, if any, and then Uninferable;
- a name imported from outside the standard library, or relatively: `builtin_numbers` makes those Uninferable;
- a function, a class (never a number), or a name assigned a string, container, comprehension or lambda;
- a name assigned something built on an Uninferable name: a call of it, an attribute, a subscript or arithmetic
  over it (astroid propagates Uninferable through each), e.g. ``x = Symbol("x")`` with ``Symbol`` imported;
- an attribute whose object is such an Uninferable name (``S.Zero``); a leaf of any other kind but names,
  attributes, numeric literals and unary or binary arithmetic (a subscript, a call...), which no proof accepts.

A name with no binding in the file (a builtin), a star-import anywhere (it may bind any name), a cycle of
assignments, or anything else unknown leaves the site to astroid: this only ever removes sites astroid would
refuse too. Checked over sympy 1.13.3, SQLAlchemy 2.1.9, sphinx 8.1.3 and pytest 8.3.4, tests included: of 84,351
sites refused here none is one astroid proves; 35% of sympy's files with operand-permute sites and 36% of those with
comparison-swap sites need no astroid tree (with tuple unpacking and loops over Uninferable values; parameters and
imports alone spared 19% and 29%).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import libcst as cst

from repoanchor.perturb.bindings import dotted_name
from repoanchor.perturb.sites import Site, SiteCollector

UNINFERABLE, NOT_A_NUMBER, UNKNOWN = "uninferable", "not a number", "unknown"
_NUMBER_LITERALS = (cst.Integer, cst.Float, cst.Imaginary)
_NOT_NUMBERS = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
    cst.Lambda,
)
_CONSTANT_NAMES = frozenset({"True", "False", "None", "__debug__"})


class _Part:
    """A binding to a part of a value: unpacked from it (``a, b = value``) or iterated over it (``for a in value``)."""

    __slots__ = ("value",)

    def __init__(self, value: cst.BaseExpression) -> None:
        self.value = value


Binding = str | cst.BaseExpression | _Part


class BindingsCollector(SiteCollector):
    """A site collector that also notes every binding of every name in the module, any scope (a kind, the value
    assigned, or a part of one), in the same walk: a subclass must walk the whole module (no `visit_` returning
    False), or a binding it skips could make a site look unprovable."""

    def __init__(self) -> None:
        super().__init__()
        self.bindings: dict[str, list[Binding]] = {}
        self.star_import = False
        self._kinds: list[str] = []  # "class" or "function" for each enclosing definition, innermost last

    def _bind(self, name: str, what: Binding) -> None:
        self.bindings.setdefault(name, []).append(what)

    def _targets(self, target: cst.BaseExpression, what: Binding) -> None:
        """Names a target binds (an attribute or subscript target binds none), unpacked ones to parts of `what`."""
        if isinstance(target, cst.Name):
            self._bind(target.value, what)
        elif isinstance(target, (cst.Tuple, cst.List, cst.StarredElement)):
            part = what if isinstance(what, (str, _Part)) else _Part(what)
            for element in target.elements if not isinstance(target, cst.StarredElement) else [target]:
                self._targets(element.value, UNKNOWN if isinstance(part, str) else part)

    def _parameters(self, params: cst.Parameters, method: bool) -> None:
        """Astroid infers a parameter as its default, if any, then Uninferable; a method's first one as its class
        or an instance (unknown here: ``self.size`` may be a number); ``*args`` and ``**kwargs`` as a tuple, a dict."""
        named = [*params.posonly_params, *params.params, *params.kwonly_params]
        for index, param in enumerate(named):
            self._bind(param.name.value, UNKNOWN if method and index == 0 else UNINFERABLE)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._bind(star.name.value, NOT_A_NUMBER)

    def _in_class(self) -> bool:
        return bool(self._kinds) and self._kinds[-1] == "class"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool | None:
        self._bind(node.name.value, NOT_A_NUMBER)
        self._parameters(node.params, method=self._in_class())
        self._kinds.append("function")
        return super().visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._kinds.pop()
        super().leave_FunctionDef(original_node)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._parameters(node.params, method=self._in_class())

    def visit_ClassDef(self, node: cst.ClassDef) -> bool | None:
        self._bind(node.name.value, NOT_A_NUMBER)
        self._kinds.append("class")
        return super().visit_ClassDef(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._kinds.pop()
        super().leave_ClassDef(original_node)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            path = dotted_name(alias.name) or ""
            local = alias.asname.name.value if alias.asname else path.split(".")[0]
            self._bind(local, UNINFERABLE if _foreign(path) else UNKNOWN)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.star_import = True
            return
        path = (dotted_name(node.module) or "") if node.module else ""
        kind = UNINFERABLE if node.relative or _foreign(path) else UNKNOWN
        for alias in node.names:
            self._bind(alias.asname.name.value if alias.asname else dotted_name(alias.name) or "", kind)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._targets(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target, node.value if node.value is not None else UNKNOWN)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target, UNKNOWN)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target, _Part(node.iter))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._targets(node.target, _Part(node.iter))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._targets(node.asname.name, _Part(node.item))  # what the item's __enter__ returns

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._targets(node.name.name, UNKNOWN)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        if node.name is not None:
            self._targets(node.name.name, UNKNOWN)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name.value, UNKNOWN)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._bind(item.name.value, UNKNOWN)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name.value, UNKNOWN)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name.value, UNKNOWN)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._bind(node.rest.value, UNKNOWN)

    def visit_TypeParam(self, node: cst.TypeParam) -> None:
        self._bind(getattr(node.param, "name", cst.Name("_")).value, UNKNOWN)


def _foreign(path: str) -> bool:
    return path.partition(".")[0] not in sys.stdlib_module_names


def unprovable_sites(
    collector: BindingsCollector, sites: list[Site], operands: Callable[[Site], list[cst.BaseExpression]]
) -> tuple[list[Site], list[tuple[Site, str]]]:
    """The sites left for astroid to judge, and those refused here, each with why (`collector` found the sites)."""
    judge = Unprovable(None if collector.star_import else collector.bindings)
    left, refused = [], []
    for site in sites:
        why = judge.why(operands(site))
        if why is None:
            left.append(site)
        else:
            refused.append((site, why))
    return left, refused


class Unprovable:
    """Judges operands of one module's sites from its bindings (see the module docstring)."""

    def __init__(self, bindings: dict[str, list[Binding]] | None) -> None:
        """`bindings`: a `BindingsCollector`'s, or None where a star-import may bind any name."""
        self._bindings = bindings
        self._kinds: dict[str, str] = {}

    def why(self, operands: list[cst.BaseExpression]) -> str | None:
        """Why no proof can accept these operands (a skip reason), or None where astroid must judge."""
        if self._bindings is None:
            return None  # a star-import may bind any name
        return next((why for operand in operands if (why := self._operand(operand))), None)

    def _operand(self, node: cst.BaseExpression) -> str | None:
        if isinstance(node, _NUMBER_LITERALS):
            return None
        if isinstance(node, cst.UnaryOperation):
            return self._operand(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return self._operand(node.left) or self._operand(node.right)
        if isinstance(node, cst.Name):
            kind = self._name(node.value)
            if kind == UNKNOWN:
                return None
            return (
                f"{'uninferable' if kind == UNINFERABLE else 'non-numeric'} operand: {node.value} (its bindings here)"
            )
        if isinstance(node, cst.Attribute):
            owner = node.value
            while isinstance(owner, cst.Attribute):
                owner = owner.value
            if isinstance(owner, cst.Name) and self._name(owner.value) == UNINFERABLE:
                return f"uninferable operand: {owner.value} (its bindings here)"
            return None
        return f"non-numeric operand: {type(node).__name__}"

    def _name(self, name: str) -> str:
        """UNINFERABLE where every binding is; NOT_A_NUMBER where every binding is one of the two; else UNKNOWN."""
        if name in self._kinds:
            return self._kinds[name]
        found = self._bindings.get(name) if name not in _CONSTANT_NAMES else None
        if not found:
            return UNKNOWN  # a builtin, or astroid's own constant
        self._kinds[name] = UNKNOWN  # while judging: a cycle of assignments stays unknown
        kinds = {self._binding(what) for what in found}
        kind = (
            UNINFERABLE if kinds == {UNINFERABLE} else NOT_A_NUMBER if kinds <= {UNINFERABLE, NOT_A_NUMBER} else UNKNOWN
        )
        self._kinds[name] = kind
        return kind

    def _binding(self, what: Binding) -> str:
        if isinstance(what, str):
            return what
        if isinstance(what, _Part):  # a part of an Uninferable value is Uninferable; of anything else, unknown
            return UNINFERABLE if self._value(what.value) == UNINFERABLE else UNKNOWN
        return self._value(what)

    def _value(self, node: cst.BaseExpression) -> str:
        """What an assigned value infers to, as far as the bindings tell: Uninferable propagates through a call of
        it, an attribute, a subscript or arithmetic over it; literals that are not numbers are not numbers."""
        if isinstance(node, cst.Name):
            return self._name(node.value)
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            return UNINFERABLE if self._value(node.value) == UNINFERABLE else UNKNOWN
        if isinstance(node, cst.Call):
            return UNINFERABLE if self._value(node.func) == UNINFERABLE else UNKNOWN
        if isinstance(node, cst.BinaryOperation):
            sides = (self._value(node.left), self._value(node.right))
            return UNINFERABLE if UNINFERABLE in sides else UNKNOWN
        if isinstance(node, cst.UnaryOperation):
            return UNINFERABLE if self._value(node.expression) == UNINFERABLE else UNKNOWN
        return NOT_A_NUMBER if isinstance(node, _NOT_NUMBERS) else UNKNOWN
