"""operand-permute: ``a + b`` becomes ``b + a`` for ``+ * & | ^`` over proven builtin numbers.

Exact only over builtin numbers (``+ *``: bool, int, float, complex; ``& | ^``: bool, int):
strings and lists do not commute, a user ``__add__`` need not, and sets are excluded because
``{1} | {True}`` keeps the element ``1`` while ``{True} | {1}`` keeps ``True``.

Types come from astroid over the whole file, so a name is typed by its assignments (module
constants, ``n = int(s)``, ``self.size`` set in ``__init__``), plus two exact builtin facts:
``len(...)`` and a ``for x in range(...)`` target are ints. Every value inferred for every leaf
must be such a number; uninferable or ambiguous means no swap (so parameters are refused).
Imports from outside the standard library are uninferable (astroid would resolve them on this
tool's ``sys.path``), a star-import from one skips the file, and ``nonlocal`` names are
uninferable (astroid misses the inner rebinding). Accepted risks: a name unbound on some path
(NameError either way) and rebinding that astroid cannot see (another module, ``setattr``).

The swap reorders evaluation, so operands hold only names, plain attributes (no property),
numeric literals, unary ``- + ~ not`` and nested ``+ - * & | ^``: no call, await, yield, walrus,
subscript (they run code), ``/ // % ** << >>`` (of two raising operands the other would raise
first). Each ``BinaryOperation`` is a site by identity (``a + b + c`` has two); a moved left operand
is parenthesised when it would re-associate, so spines deeper than MAX_CHAIN are refused.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import libcst as cst
from astroid import bases, inference_tip, util
from astroid import nodes as an
from astroid.builder import AstroidBuilder
from astroid.context import _invalidate_cache
from astroid.exceptions import AstroidSyntaxError, AttributeInferenceError, InferenceError, UseInferenceDefault
from astroid.manager import AstroidManager
from astroid.transforms import TransformVisitor

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, SiteTransform
from repoanchor.perturb.transform_checks import node_spans

SWAPPABLE = {cst.Add: "+", cst.Multiply: "*", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^"}
UNARY_OPS = (cst.Minus, cst.Plus, cst.BitInvert, cst.Not)
PRECEDENCE = {cst.BitOr: 1, cst.BitXor: 2, cst.BitAnd: 3, cst.Add: 4, cst.Subtract: 4, cst.Multiply: 5}
NUMERIC = ("bool", "int", "float", "complex")  # promotion order; bool arithmetic yields int
MAX_CHAIN = 50  # swaps down a left spine nest parentheses, and CPython allows 200 levels
EFFECTFUL = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Subscript)
NON_NUMERIC = (cst.BaseString, cst.List, cst.Tuple, cst.Set, cst.Dict, cst.BaseComp, cst.Lambda)
_NEWLINE = re.compile(r"\r\n|\r|\n")


class _Refused(Exception): ...  # the message is the skip reason


def _shape_problem(node: cst.BaseExpression) -> str | None:
    """Why evaluating `node` could run code, raise, or not be a number, judged from its shape."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.Imaginary)):
        return None
    if isinstance(node, cst.Attribute):
        return _shape_problem(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, UNARY_OPS):
        return _shape_problem(node.expression)
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in PRECEDENCE:
        return _shape_problem(node.left) or _shape_problem(node.right)
    if isinstance(node, cst.BinaryOperation):
        return f"effectful operand: {type(node.operator).__name__} may raise"
    if isinstance(node, EFFECTFUL):
        return f"effectful operand: {type(node).__name__} may run code or raise"
    kind = "non-numeric" if isinstance(node, NON_NUMERIC) else "unsupported"
    return f"{kind} operand: {type(node).__name__}"


def _spine(node: cst.BaseExpression, limit: int = MAX_CHAIN + 1) -> int:
    return 1 + _spine(node.left, limit - 1) if limit and isinstance(node, cst.BinaryOperation) and not node.lpar else 0


def _astroid_spans(tree: an.Module, text: str, kind: type = an.BinOp) -> dict[tuple[int, int], an.NodeNG]:
    """Each node of `kind` (binary operations by default) by character span; ast columns count UTF-8 bytes."""
    lines = _NEWLINE.split(text)
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + len(lines[line - 1].encode()[:column].decode())

    found = tree.nodes_of_class(kind)
    return {(offset(n.lineno, n.col_offset), offset(n.end_lineno, n.end_col_offset)): n for n in found}


def _an_int(node: an.Call | an.AssignName, context=None) -> Iterator[bases.Instance]:
    """Inference tip for len() calls and range() loop targets: an exact builtin int."""
    call, name = (node, "len") if isinstance(node, an.Call) else (node.parent.iter, "range")
    func = getattr(call, "func", None)
    if not (isinstance(func, an.Name) and func.name == name and func.lookup(name)[0].name == "builtins"):
        raise UseInferenceDefault
    yield bases.Instance(AstroidManager().builtins_module["int"])


def _foreign(node: an.Import | an.ImportFrom) -> bool:
    names = [node.modname] if isinstance(node, an.ImportFrom) else [name for name, _ in node.names]
    return bool(getattr(node, "level", 0)) or any(n.partition(".")[0] not in sys.stdlib_module_names for n in names)


def _parse(ctx: FileContext, text: str) -> an.Module | None:
    manager = AstroidManager()
    try:
        tree = AstroidBuilder(manager).string_build(text, modname="")
    except (AstroidSyntaxError, RecursionError) as exc:
        ctx.skip(f"astroid cannot parse: {str(exc).strip().splitlines()[-1]}")
        return None
    if manager.astroid_cache.get(tree.name) is tree:
        del manager.astroid_cache[tree.name]  # a per-pass tree must not outlive the pass
    star = next((n for n in tree.nodes_of_class(an.ImportFrom) if n.names[0][0] == "*" and _foreign(n)), None)
    if star:
        ctx.skip(f"uninferable operand: a star-import from {star.modname or '.'} may rebind any name")
        return None
    return _with_tips(tree)


def _with_tips(tree: an.Module) -> an.Module:
    """Make foreign imports and nonlocal names uninferable; type len() and range() loop targets."""
    tips, uninferable = TransformVisitor(), inference_tip(lambda node, context=None: iter([util.Uninferable]))
    nonlocals = {name for node in tree.nodes_of_class(an.Nonlocal) for name in node.names}
    tips.register_transform(an.Import, uninferable, _foreign)
    tips.register_transform(an.ImportFrom, uninferable, _foreign)
    tips.register_transform(an.Name, uninferable, lambda node: node.name in nonlocals)
    tip = inference_tip(_an_int)
    tips.register_transform(an.Call, tip, lambda node: getattr(node.func, "name", "") == "len")
    tips.register_transform(an.AssignName, tip, lambda node: isinstance(node.parent, (an.For, an.Comprehension)))
    return tips.visit(tree)


def _leaf_types(node: an.Name | an.Attribute) -> set[str]:
    if isinstance(node, an.Attribute):
        _require_plain_attribute(node)
    try:
        values = list(node.infer())
    except (InferenceError, RecursionError) as exc:
        raise _Refused(f"uninferable operand: {node.as_string()}") from exc
    if any(isinstance(value, util.UninferableBase) for value in values):
        raise _Refused(f"uninferable operand: {node.as_string()}")
    kinds = {(v.pytype() if hasattr(v, "pytype") else type(v).__name__).removeprefix("builtins.") for v in values}
    if not kinds <= set(NUMERIC):
        raise _Refused(f"non-numeric operand: {node.as_string()} may be {'/'.join(sorted(kinds - set(NUMERIC)))}")
    return kinds


def _require_plain_attribute(node: an.Attribute) -> None:
    if isinstance(node.expr, an.Attribute):
        _require_plain_attribute(node.expr)
    try:
        owners = list(node.expr.infer())
        if any(isinstance(owner, util.UninferableBase) or not hasattr(owner, "getattr") for owner in owners):
            raise _Refused(f"uninferable operand: {node.expr.as_string()}")
        definitions = [d for owner in owners for d in owner.getattr(node.attrname)]
    except (InferenceError, AttributeInferenceError, RecursionError) as exc:
        raise _Refused(f"uninferable operand: {node.as_string()}") from exc
    if not all(isinstance(d, (an.AssignName, an.AssignAttr, an.Const)) for d in definitions):
        raise _Refused(f"effectful operand: {node.as_string()} is not a plain attribute (property, method...)")


def _types(node: an.NodeNG) -> set[str]:
    """The builtin numeric types `node` may evaluate to, or _Refused."""
    if isinstance(node, an.Const) and type(node.value).__name__ in NUMERIC:
        return {type(node.value).__name__}
    if isinstance(node, (an.Name, an.Attribute)):
        return _leaf_types(node)
    if isinstance(node, an.UnaryOp):
        inner = _types(node.operand)
        if node.op == "not":
            return {"bool"}
        if node.op == "~" and not inner <= {"bool", "int"}:
            raise _Refused(f"non-numeric operand: ~ over {'/'.join(sorted(inner))}")
        return {_combine("+", kind, "int") for kind in inner}
    if isinstance(node, an.BinOp):
        lefts, rights = _types(node.left), _types(node.right)
        return {_combine(node.op, left, right) for left in lefts for right in rights}
    raise _Refused(f"non-numeric operand: {node.as_string()}")


def _combine(op: str, left: str, right: str) -> str:
    rank = max(NUMERIC.index(left), NUMERIC.index(right))
    if op in "&|^":
        if rank > 1:
            raise _Refused(f"non-numeric operand: {NUMERIC[rank]} under {op}")
        return "bool" if left == right == "bool" else "int"
    return NUMERIC[max(rank, 1)]


class _Collector(SiteCollector):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) not in SWAPPABLE:
            return
        if _spine(node.left) > MAX_CHAIN:
            problem = f"deep chain: over {MAX_CHAIN} nested operations would pass the parser's parenthesis limit"
        else:
            problem = _shape_problem(node.left) or _shape_problem(node.right)
        if problem:
            self.ctx.skip(problem, self.label(node))
        else:
            self.add(node)


def _typed(module: cst.Module, ctx: FileContext, sites: list[Site]) -> list[Site]:
    text, spans = node_spans(module, [site.node for site in sites])
    ctx.remember_code(module, text)
    if (tree := _parse(ctx, text)) is None:
        return []
    binops = _astroid_spans(tree, text)
    kept = []
    for site in sites:
        binop = binops.get(spans[id(site.node)])
        allowed = {"bool", "int"} if SWAPPABLE[type(site.node.operator)] in "&|^" else set(NUMERIC)
        try:
            if binop is None:
                raise _Refused("unmapped site: astroid has no operation at this position")
            for operand in (binop.left, binop.right):
                if not _types(operand) <= allowed:
                    raise _Refused(f"non-numeric operand: {operand.as_string()} is not an int under a bitwise operator")
            kept.append(site)
        except _Refused as why:
            ctx.skip(str(why), site)
    return kept


def _swap(site: Site, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BinaryOperation:
    moved = updated.left
    level = PRECEDENCE[type(updated.operator)]
    if isinstance(moved, cst.BinaryOperation) and not moved.lpar and PRECEDENCE[type(moved.operator)] <= level:
        moved = moved.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return updated.with_changes(left=updated.right, right=moved)


class OperandPermute(SiteTransform):
    id = "operand-permute"
    description = "Swap the operands of + * & | ^ when astroid proves both are plain builtin numbers."
    collector = _Collector
    rewrite = staticmethod(_swap)

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        sites = super().candidates(module, ctx)
        try:
            return _typed(module, ctx, sites) if sites else []
        finally:
            _invalidate_cache()  # astroid's global inference cache would keep every file's tree alive
