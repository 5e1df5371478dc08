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
