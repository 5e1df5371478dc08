"""Where a literal must stay a literal: each rule names a stable reason class.

Rules look only at the chain of ancestors (module first) and the literal itself, so each is a
cheap pass over (parent, child) pairs. Runtime-safe places that static tools read as source
(type checkers, packaging tools reading ``__version__`` with a regex, linters reading
``__all__``) are refused too: a variant must not look broken to the agent's tools either.
"""

from __future__ import annotations

import libcst as cst

from repoanchor.perturb.bindings import dotted_name
from repoanchor.perturb.transform_checks import compares_name, is_gettext_call

TYPING_CALLS = frozenset(
    {
        "TypeVar",
        "ParamSpec",
        "TypeVarTuple",
        "NewType",
        "NamedTuple",
        "TypedDict",
        "TypeAliasType",
        "cast",
        "namedtuple",
        "assert_type",
        "reveal_type",
        "ForwardRef",
    }
)
"""Calls whose string or literal arguments type checkers read statically."""
TYPING_SUBSCRIPTS = frozenset(
    {
        "Literal",
        "Annotated",
        "Optional",
        "Union",
        "List",
        "Dict",
        "Set",
        "FrozenSet",
        "Tuple",
        "Type",
        "Callable",
        "ClassVar",
        "Final",
        "Sequence",
        "Mapping",
        "MutableMapping",
        "Iterable",
        "Iterator",
        "Generator",
        "Awaitable",
        "Coroutine",
        "TypeGuard",
        "Required",
        "NotRequired",
        "list",
        "dict",
        "set",
        "frozenset",
        "tuple",
        "type",
    }
)
"""Generic aliases: a string there is a forward reference, a literal there is a type."""
PLATFORM_PREFIXES = ("sys.version_info", "sys.platform", "os.name", "sys.implementation", "platform.", "sys.byteorder")
_ANNOTATION_NODES = (cst.Annotation, cst.TypeAlias, cst.TypeParameters, cst.TypeParam)


def refusal(chain: list[cst.CSTNode], node: cst.CSTNode) -> str | None:
    """The reason class that keeps `node` (whose ancestors are `chain`) a literal, or None."""
    for parent, child in zip(chain, [*chain[1:], node], strict=True):
        rule = _PARENT_RULES.get(type(parent))  # most ancestors have no rule: one lookup, no isinstance
        reason = rule(parent, child) if rule else None
        if reason:
            return reason
    return None


def _docstring(parent: cst.Expr, child: cst.CSTNode) -> str | None:
    if isinstance(child, (cst.SimpleString, cst.ConcatenatedString)):
        return "docstring"  # docstrings and attribute docstrings: read by tools, never computed
    return None


def _annotation(parent: cst.CSTNode, child: cst.CSTNode) -> str:
    return "annotation"


def _match_pattern(parent: cst.MatchCase, child: cst.CSTNode) -> str | None:
    return "match-pattern" if child is parent.pattern else None


def _assigned(parent: cst.Assign | cst.AnnAssign | cst.AugAssign, child: cst.CSTNode) -> str | None:
    if child is parent.value and any(_is_dunder(target) for target in _targets(parent)):
        return "dunder-target"
    return None


def _subscript(parent: cst.Subscript, child: cst.CSTNode) -> str | None:
    if child is not parent.value:
        name = dotted_name(parent.value)
        if name and name.rsplit(".", 1)[-1] in TYPING_SUBSCRIPTS:
            return "typing-construct"
    return None


def _comparison(parent: cst.Comparison, child: cst.CSTNode) -> str | None:
    if _platform_check(parent):
        return "platform-check"
    if compares_name(parent, "__name__"):
        return "main-guard"  # `if __name__ == "__main__":` is matched as text by coverage and linters
    return None


def _call_refusal(call: cst.Call) -> str | None:
    name = dotted_name(call.func) or ""
    if name.rsplit(".", 1)[-1] in TYPING_CALLS:
        return "typing-construct"
    if is_gettext_call(name):
        return "translation-string"
    if name.startswith(PLATFORM_PREFIXES):
        return "platform-check"  # sys.platform.startswith("win"): type checkers evaluate it
    head, _, method = name.rpartition(".")
    if method in {"append", "extend", "remove", "insert", "__iadd__"} and _is_dunder_name(head):
        return "dunder-target"  # __all__.append("name") is read statically like __all__ = [...]
    return None


def _function_refusal(func: cst.FunctionDef) -> str | None:
    # A compiled function's literals are kept too, by the transform (`source/jit_compiled.py`): its decorator's
    # name may be bound anywhere in the module, which a rule that sees the function alone cannot tell.
    return "finalizer" if func.name.value == "__del__" else None  # may run at shutdown, globals cleared


_PARENT_RULES = {
    cst.Expr: _docstring,
    **dict.fromkeys(_ANNOTATION_NODES, _annotation),
    cst.MatchCase: _match_pattern,
    **dict.fromkeys((cst.Assign, cst.AnnAssign, cst.AugAssign), _assigned),
    cst.Call: lambda parent, child: _call_refusal(parent),
    cst.Subscript: _subscript,
    cst.Comparison: _comparison,
    cst.FunctionDef: lambda parent, child: _function_refusal(parent),
}
"""The rule for each kind of parent, by exact type: LibCST's node classes are final (no node subclasses
another concrete one), so this is `isinstance` without its cost on every ancestor of every literal."""


def _targets(stmt: cst.Assign | cst.AnnAssign | cst.AugAssign) -> list[cst.BaseExpression]:
    if isinstance(stmt, cst.Assign):
        return [t.target for t in stmt.targets]
    return [stmt.target]


def _is_dunder(target: cst.BaseExpression) -> bool:
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_is_dunder(el.value) for el in target.elements)
    if isinstance(target, cst.Attribute):
        return _is_dunder_name(target.attr.value)
    return isinstance(target, cst.Name) and _is_dunder_name(target.value)


def _is_dunder_name(name: str) -> bool:
    name = name.rsplit(".", 1)[-1]
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _platform_check(comparison: cst.Comparison) -> bool:
    operands = [comparison.left, *(target.comparator for target in comparison.comparisons)]
    for operand in operands:
        while isinstance(operand, (cst.Subscript, cst.Call)):
            operand = operand.value if isinstance(operand, cst.Subscript) else operand.func
        name = dotted_name(operand) or ""
        if name.startswith(PLATFORM_PREFIXES) or name in {"PY2", "PY3", "PYPY", "WIN", "IS_WINDOWS"}:
            return True
    return False


def identity_compared(chain: list[cst.CSTNode], node: cst.CSTNode) -> bool:
    """Whether `node` is an operand of ``is`` / ``is not`` on either side, in a chained comparison too."""
    if not chain:
        return False
    parent = chain[-1]
    if isinstance(parent, cst.Comparison) and node is parent.left:
        return _is_identity(parent.comparisons[0].operator)
    if not isinstance(parent, cst.ComparisonTarget) or len(chain) < 2:
        return False
    comparison = chain[-2]
    if not isinstance(comparison, cst.Comparison):
        return False
    targets = list(comparison.comparisons)
    index = next(i for i, target in enumerate(targets) if target is parent)
    neighbours = [targets[index]] + targets[index + 1 : index + 2]
    return any(_is_identity(target.operator) for target in neighbours)


def _is_identity(operator: cst.BaseCompOp) -> bool:
    return isinstance(operator, (cst.Is, cst.IsNot))
