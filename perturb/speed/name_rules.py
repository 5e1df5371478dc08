"""The node rules of `function_names`'s walk that need no state of their own: imports, declarations,
calls, attributes, subscripts, f-string fields, match captures and assignment statements, plus the
``typing`` imports that make a string a type hint."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from repoanchor.perturb.transform_checks import attribute_introspection, call_introspection
from repoanchor.perturb.traversal.walk import children

if TYPE_CHECKING:
    from repoanchor.perturb.speed.function_names import NameScope, _Walker

_TYPING_MODULES = frozenset({"typing", "typing_extensions"})
_HINT_CALLS = frozenset({"cast", "TypeVar", "NewType"})


def typing_imports(module: cst.Module) -> tuple[frozenset[str], frozenset[str]]:
    """Names imported from ``typing``/``typing_extensions`` anywhere in the module, and the names those
    modules themselves are bound to: what makes a subscript or a call a type hint."""
    names, modules, stack = set(), set(), list(module.body)
    while stack:
        node = stack.pop()
        if type(node) is cst.SimpleStatementLine:
            stack.extend(node.body)
        elif type(node) is cst.ImportFrom and _dotted(node.module) in _TYPING_MODULES:
            if not isinstance(node.names, cst.ImportStar):
                names.update(_dotted(a.asname.name if a.asname else a.name) for a in node.names)
        elif type(node) is cst.Import:
            typing_aliases = (a for a in node.names if _dotted(a.name) in _TYPING_MODULES)
            modules.update(_dotted(a.asname.name if a.asname else a.name) for a in typing_aliases)
        elif isinstance(node, cst.BaseCompoundStatement):
            stack.extend(children(node, "statements"))
        elif type(node) in (cst.IndentedBlock, cst.Else, cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler):
            stack.extend(children(node, "statements"))
    return frozenset(names), frozenset(modules)


def _dotted(node: cst.CSTNode | None) -> str:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _import(walker: _Walker, node: cst.Import | cst.ImportFrom, scope: NameScope) -> None:
    if isinstance(node.names, cst.ImportStar):
        return
    order = walker.tick()  # one place for every name of the statement: they tie, as they share one node
    for alias in node.names:
        bound = alias.asname.name if alias.asname else alias.name
        while isinstance(bound, cst.Attribute):  # `import a.b.c` binds `a`
            bound = bound.value
        scope.bind(bound.value, type(node).__name__, node, order)


def _declaration(walker: _Walker, node: cst.Global | cst.Nonlocal, scope: NameScope) -> None:
    names = {item.name.value for item in node.names}
    walker.declared |= names
    scope.declared |= names


def _call(walker: _Walker, node: cst.Call, scope: NameScope) -> None:
    func = node.func
    called = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
    if found := call_introspection(node):
        walker.found_introspection(found)
    walker.visit(func, scope)
    hint_call = called in _HINT_CALLS and walker.typing_member(func)
    for index, arg in enumerate(node.args):
        if hint_call and (index == 0 or called != "cast"):
            walker.hinted(arg.value, scope)
        else:
            walker.visit(arg.value, scope)


def _attribute(walker: _Walker, node: cst.Attribute, scope: NameScope) -> None:
    if found := attribute_introspection(node):
        walker.found_introspection(found)
    walker.visit(node.value, scope)


def _subscript(walker: _Walker, node: cst.Subscript, scope: NameScope) -> None:
    walker.visit(node.value, scope)
    read = walker.hinted if walker.typing_member(node.value) else walker.visit
    for element in node.slice:
        read(element, scope)


def _formatted_field(walker: _Walker, node: cst.FormattedStringExpression, scope: NameScope) -> None:
    walker.selfdoc += node.equal is not None
    for child in children(node, "pruned"):
        walker.visit(child, scope)
    walker.selfdoc -= node.equal is not None


def _match_capture(walker: _Walker, node: cst.MatchAs | cst.MatchStar, scope: NameScope) -> None:
    if getattr(node, "pattern", None):
        walker.visit(node.pattern, scope)
    if node.name:
        walker.target(node.name, scope, "capture")


def _match_mapping(walker: _Walker, node: cst.MatchMapping, scope: NameScope) -> None:
    walker.block(node.elements, scope)
    if node.rest:
        walker.target(node.rest, scope, "capture")


def _statement_targets(walker: _Walker, node, scope: NameScope) -> None:
    """Assign, AugAssign, AnnAssign, NamedExpr, For: targets bind, every other child is read."""
    holders = node.targets if type(node) is cst.Assign else (node.target,)  # AssignTarget nodes, or the target
    for holder in holders:
        walker.target(holder.target if type(holder) is cst.AssignTarget else holder, scope)
    for child in children(node, "pruned"):
        if all(child is not holder for holder in holders):
            (walker.hinted if type(child) is cst.Annotation else walker.visit)(child, scope)


RULES = {
    cst.Annotation: lambda w, node, scope: w.hinted(node.annotation, scope),
    cst.Import: _import,
    cst.ImportFrom: _import,
    cst.Global: _declaration,
    cst.Nonlocal: _declaration,
    cst.Call: _call,
    cst.Attribute: _attribute,
    cst.Subscript: _subscript,
    cst.FormattedStringExpression: _formatted_field,
    cst.Arg: lambda w, node, scope: w.visit(node.value, scope),  # a keyword argument's name is no variable
    cst.AsName: lambda w, node, scope: w.target(node.name, scope),
    cst.MatchAs: _match_capture,
    cst.MatchStar: _match_capture,
    cst.MatchMapping: _match_mapping,
    cst.MatchKeywordElement: lambda w, node, scope: w.visit(node.pattern, scope),
    **dict.fromkeys((cst.Assign, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For), _statement_targets),
}
