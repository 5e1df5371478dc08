"""Sites astroid cannot prove builtin numbers, told from the file's own bindings before astroid builds the file.

Astroid's tree of a file costs about a third of a LibCST parse and emission, and most files with comparison or
arithmetic sites have no site it proves (sympy's modules: 62% of operand-permute's files, 46% of their bytes; 86%
of comparison-swap's files with no literal side, 82%). `builtin_numbers` refuses a site as soon as one leaf of an
operand infers to something other than a builtin number, and astroid's lookup of a name only ever yields bindings
the file holds (or a builtin). So an operand leaf is refused here, with no astroid, only where *every* binding of its
name in the scopes enclosing the site (the module, and each def, class or lambda around it: a lookup climbs those
and no other, so another function's binding of the same name never reaches it) infers to something that is not a
number, whichever of them a lookup picks; a name declared `global` or `nonlocal` anywhere, or bound only out of
reach, is judged by every binding in the file:

- a parameter (not the first of a method): astroid yields its default, if any, and then Uninferable;
- a name imported from outside the standard library, or relatively: `builtin_numbers` makes those Uninferable;
- a function, a class (never a number), or a name assigned a string, container, comprehension or lambda;
- a name assigned something built on an Uninferable name: a call of it, an attribute, a subscript or arithmetic
  over it (astroid propagates Uninferable through each), e.g. ``x = Symbol("x")`` with ``Symbol`` imported;
- an attribute whose object is such an Uninferable name (``S.Zero``); a leaf of any other kind but names,
  attributes, numeric literals and unary or binary arithmetic (a subscript, a call...), which no proof accepts.

A name with no binding in the file (a builtin), a star-import anywhere (it may bind any name), a cycle of
assignments, or anything else unknown leaves the site to astroid: this only ever removes sites astroid would
refuse too. Checked over sympy 1.13.3, SQLAlchemy 2.1.9, sphinx 8.1.3 and pytest 8.3.4, tests included: of 94,967
sites refused here none is one astroid proves; 40% of sympy's files with operand-permute sites and 45% of those with
comparison-swap sites need no astroid tree (judged by every binding in the file: 84,351 sites, 35% and 36%).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from repoanchor.perturb.proofs.bindings_seen import NOT_A_NUMBER, UNINFERABLE, UNKNOWN, Binding, BindingsCollector, Part
from repoanchor.perturb.sites import Site

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


def unprovable_sites(
    collector: BindingsCollector, sites: list[Site], operands: Callable[[Site], list[cst.BaseExpression]]
) -> tuple[list[Site], list[tuple[Site, str]]]:
    """The sites left for astroid to judge, and those refused here, each with why (`collector` found the sites)."""
    judge = Unprovable(None if collector.star_import else collector.bindings, collector.declared)
    left, refused = [], []
    for site in sites:
        why = judge.why(operands(site), site.data.get("scopes"))
        if why is None:
            left.append(site)
        else:
            refused.append((site, why))
    return left, refused


class Unprovable:
    """Judges operands of one module's sites from its bindings (see the module docstring)."""

    def __init__(self, bindings: dict[str, list[tuple[int, Binding]]] | None, declared: set[str] = frozenset()) -> None:
        """`bindings`: a `BindingsCollector`'s, or None where a star-import may bind any name; `declared`: its names
        in `global` or `nonlocal` statements, judged by every binding in the file."""
        self._bindings = bindings
        self._declared = declared
        self._kinds: dict[tuple[str, frozenset[int] | None], str] = {}

    def why(self, operands: list[cst.BaseExpression], scopes: frozenset[int] | None = None) -> str | None:
        """Why no proof can accept these operands (a skip reason), or None where astroid must judge. `scopes`: those
        enclosing the operands (a leaf is judged by the bindings made there), or None for every binding in the file."""
        if self._bindings is None:
            return None  # a star-import may bind any name
        return next((why for operand in operands if (why := self._operand(operand, scopes))), None)

    def _operand(self, node: cst.BaseExpression, scopes: frozenset[int] | None) -> str | None:
        if isinstance(node, _NUMBER_LITERALS):
            return None
        if isinstance(node, cst.UnaryOperation):
            return self._operand(node.expression, scopes)
        if isinstance(node, cst.BinaryOperation):
            return self._operand(node.left, scopes) or self._operand(node.right, scopes)
        if isinstance(node, cst.Name):
            kind = self._name(node.value, scopes)
            if kind == UNKNOWN:
                return None
            return (
                f"{'uninferable' if kind == UNINFERABLE else 'non-numeric'} operand: {node.value} (its bindings here)"
            )
        if isinstance(node, cst.Attribute):
            owner = node.value
            while isinstance(owner, cst.Attribute):
                owner = owner.value
            if isinstance(owner, cst.Name) and self._name(owner.value, scopes) == UNINFERABLE:
                return f"uninferable operand: {owner.value} (its bindings here)"
            return None
        return f"non-numeric operand: {type(node).__name__}"

    def _name(self, name: str, scopes: frozenset[int] | None = None) -> str:
        """UNINFERABLE where every binding is; NOT_A_NUMBER where every binding is one of the two; else UNKNOWN.
        `scopes`: only the bindings made in these count (astroid's lookup climbs the enclosing scopes and yields
        bindings of one of them); None, or a name declared `global`/`nonlocal`: every binding in the file. A value
        assigned is judged by every binding of its names (`_value`), which only ever leaves more to astroid."""
        if name in self._declared:
            scopes = None
        key = (name, scopes)
        if key in self._kinds:
            return self._kinds[key]
        found = self._bindings.get(name) if name not in _CONSTANT_NAMES else None
        if not found:
            return UNKNOWN  # a builtin, or astroid's own constant
        values = [what for scope, what in found if scopes is None or scope in scopes]
        if not values:  # bound only out of reach: a lookup from here finds a builtin or nothing, as before
            return self._name(name)
        self._kinds[key] = UNKNOWN  # while judging: a cycle of assignments stays unknown
        kinds = {self._binding(what) for what in values}
        kind = (
            UNINFERABLE if kinds == {UNINFERABLE} else NOT_A_NUMBER if kinds <= {UNINFERABLE, NOT_A_NUMBER} else UNKNOWN
        )
        self._kinds[key] = kind
        return kind

    def _binding(self, what: Binding) -> str:
        if isinstance(what, str):
            return what
        if isinstance(what, Part):  # a part of an Uninferable value is Uninferable; of anything else, unknown
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
