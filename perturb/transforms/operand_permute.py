"""operand-permute: ``a + b`` becomes ``b + a`` for ``+ * & | ^`` over proven plain numbers.

Swapping is exact only when both operands are builtin numbers: ``+``/``*`` over bool, int,
float and complex, and ``& | ^`` over bool and int. Strings and lists do not commute, a user
``__add__`` need not, and sets are excluded although ``|`` is symmetric as a set: ``{1} | {True}``
keeps the element ``1`` while ``{True} | {1}`` keeps ``True``.

Types are proven by astroid over the whole file, so a name is typed by its assignments
(``n = int(s); n * 2``, module constants, ``self.size`` set in ``__init__``), with two exact
builtin facts added: ``len(...)`` returns an int and a ``for x in range(...)`` target is an int.
Every value inferred for every leaf must be such a number; uninferable or ambiguous means no
swap, so parameters (callers may pass anything) are refused. Imports outside the standard
library, and relative imports, are uninferable on purpose: astroid would resolve them against
this tool's own ``sys.path``, not the project's. Names declared ``nonlocal`` anywhere are
refused because astroid does not see the inner rebinding.

Swapping also swaps evaluation order, so an operand may only be built from names, plain
attributes, numeric literals, unary ``- + ~ not`` and nested ``+ - * & | ^``: no call, await,
yield, walrus or subscript (``__getitem__`` runs code and raises), and no ``/ // % ** << >>``
(they can raise, and two raising operands would raise the other error first). An attribute is
plain when every definition astroid finds for it is an assignment, never a property or method.
Refused, deliberately: a name that is unbound on some path (both orders raise NameError, with
another message) and an outside rebinding (another module, ``setattr``) that astroid cannot see.

Each ``BinaryOperation`` is its own site by identity, so both nodes of ``a + b + c`` are sites;
a moved left operand is parenthesised when it would otherwise re-associate (``c + (a + b)``).
astroid runs only when LibCST finds a structurally possible site, once per pass.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence

import libcst as cst
from astroid import bases, inference_tip, util
from astroid import nodes as an
from astroid.builder import AstroidBuilder
from astroid.context import _invalidate_cache
from astroid.exceptions import AstroidSyntaxError, AttributeInferenceError, InferenceError, UseInferenceDefault
from astroid.manager import AstroidManager
from astroid.transforms import TransformVisitor
from libcst.metadata import PositionProvider

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, rewrite_sites
from repoanchor.perturb.transforms._common import rebound_names

SWAPPABLE = {cst.Add: "+", cst.Multiply: "*", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^"}
INNER_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.BitAnd, cst.BitOr, cst.BitXor)
UNARY_OPS = (cst.Minus, cst.Plus, cst.BitInvert, cst.Not)
PRECEDENCE = {cst.BitOr: 1, cst.BitXor: 2, cst.BitAnd: 3, cst.Add: 4, cst.Subtract: 4, cst.Multiply: 5}
NUMERIC = ("bool", "int", "float", "complex")
"""In promotion order: a mixed operation yields the later type, and bool arithmetic yields int."""
EFFECTFUL = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Subscript)
_NEWLINE = re.compile(r"\r\n|\r|\n")


class _Refused(Exception):
    """Why one site cannot be swapped; the text is the skip reason."""


def _shape_problem(node: cst.BaseExpression) -> str | None:
    """Why evaluating `node` could run code, raise, or not be a number, judged from its shape."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.Imaginary)):
        return None
    if isinstance(node, cst.Attribute):
        return None if isinstance(node.value, (cst.Name, cst.Attribute)) else _shape_problem(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, UNARY_OPS):
        return _shape_problem(node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, INNER_OPS):
        return _shape_problem(node.left) or _shape_problem(node.right)
    kind = type(node).__name__
    if isinstance(node, cst.BinaryOperation):
        return f"effectful operand: {type(node.operator).__name__} may raise"
    if isinstance(node, EFFECTFUL):
        return f"effectful operand: {kind} may run code or raise"
    if isinstance(node, (cst.BaseString, cst.List, cst.Tuple, cst.Set, cst.Dict, cst.BaseComp, cst.Lambda)):
        return f"non-numeric operand: {kind}"
    return f"unsupported operand: {kind}"


def _builtin_name(node: an.NodeNG, name: str) -> bool:
    return isinstance(node, an.Name) and node.name == name and node.lookup(name)[0].name == "builtins"


def _an_int(node: an.NodeNG, context=None) -> Iterator[bases.Instance]:
    """Inference tip for len() calls and range() loop targets: an exact builtin int."""
    call = node if isinstance(node, an.Call) else node.parent.iter
    if not _builtin_name(call.func, "len" if call is node else "range"):
        raise UseInferenceDefault
    yield bases.Instance(AstroidManager().builtins_module["int"])


def _uninferable(node: an.NodeNG, context=None) -> Iterator[util.UninferableBase]:
    yield util.Uninferable


def _foreign_import(node: an.Import | an.ImportFrom) -> bool:
    if isinstance(node, an.ImportFrom):
        return bool(node.level) or node.modname.partition(".")[0] not in sys.stdlib_module_names
    return any(name.partition(".")[0] not in sys.stdlib_module_names for name, _ in node.names)


def _len_call(node: an.Call) -> bool:
    return isinstance(node.func, an.Name) and node.func.name == "len"


def _loop_target(node: an.AssignName) -> bool:
    loop = node.parent
    return isinstance(loop, (an.For, an.Comprehension)) and loop.target is node and isinstance(loop.iter, an.Call)


def _parse(ctx: FileContext, module: cst.Module) -> an.Module | None:
    manager = AstroidManager()
    try:
        tree = AstroidBuilder(manager).string_build(ctx.code, modname="")
    except (AstroidSyntaxError, RecursionError) as exc:
        ctx.skip(f"astroid cannot parse: {type(exc).__name__}")
        return None
    if manager.astroid_cache.get(tree.name) is tree:
        del manager.astroid_cache[tree.name]  # a per-pass tree must not outlive the pass
    tips = TransformVisitor()
    tips.register_transform(an.Import, inference_tip(_uninferable), _foreign_import)
    tips.register_transform(an.ImportFrom, inference_tip(_uninferable), _foreign_import)
    if rebound_names(module, ctx.code, ("len", "range")) is None:
        tips.register_transform(an.Call, inference_tip(_an_int), _len_call)
        tips.register_transform(an.AssignName, inference_tip(_an_int), _loop_target)
    tips.visit(tree)
    return tree


def _leaf_types(node: an.Name | an.Attribute, nonlocals: set[str]) -> set[str]:
    text = node.as_string()
    if isinstance(node, an.Name) and node.name in nonlocals:
        raise _Refused(f"uninferable operand: {text} is declared nonlocal")
    if isinstance(node, an.Attribute):
        _require_plain_attribute(node, nonlocals)
    try:
        values = list(node.infer())
    except (InferenceError, RecursionError) as exc:
        raise _Refused(f"uninferable operand: {text}") from exc
    types = set()
    for value in values:
        if isinstance(value, util.UninferableBase):
            raise _Refused(f"uninferable operand: {text}")
        pytype = value.pytype() if isinstance(value, bases.Instance) else type(value).__name__
        if pytype.removeprefix("builtins.") not in NUMERIC:
            raise _Refused(f"non-numeric operand: {text} may be {pytype}")
        types.add(pytype.removeprefix("builtins."))
    return types


def _require_plain_attribute(node: an.Attribute, nonlocals: set[str]) -> None:
    if isinstance(node.expr, an.Attribute):
        _require_plain_attribute(node.expr, nonlocals)
    try:
        owners = list(node.expr.infer())
        if any(isinstance(owner, util.UninferableBase) or not hasattr(owner, "getattr") for owner in owners):
            raise _Refused(f"uninferable operand: {node.expr.as_string()}")
        definitions = [d for owner in owners for d in owner.getattr(node.attrname)]
    except (InferenceError, AttributeInferenceError, RecursionError) as exc:
        raise _Refused(f"uninferable operand: {node.as_string()}") from exc
    if not all(isinstance(d, (an.AssignName, an.AssignAttr, an.Const)) for d in definitions):
        raise _Refused(f"effectful operand: {node.as_string()} is not a plain attribute (property, method...)")


def _types(node: an.NodeNG, nonlocals: set[str]) -> set[str]:
    """The builtin numeric types `node` may evaluate to, or _Refused."""
    if isinstance(node, an.Const):
        if type(node.value).__name__ not in NUMERIC:
            raise _Refused(f"non-numeric operand: {node.as_string()}")
        return {type(node.value).__name__}
    if isinstance(node, (an.Name, an.Attribute)):
        return _leaf_types(node, nonlocals)
    if isinstance(node, an.UnaryOp):
        inner = _types(node.operand, nonlocals)
        if node.op == "not":
            return {"bool"}
        if node.op == "~" and not inner <= {"bool", "int"}:
            raise _Refused(f"non-numeric operand: ~ over {'/'.join(sorted(inner))}")
        return {_combine("+", kind, "int") for kind in inner}
    if isinstance(node, an.BinOp):
        lefts, rights = _types(node.left, nonlocals), _types(node.right, nonlocals)
        return {_combine(node.op, left, right) for left in lefts for right in rights}
    raise _Refused(f"unsupported operand: {type(node).__name__}")


def _combine(op: str, left: str, right: str) -> str:
    rank = max(NUMERIC.index(left), NUMERIC.index(right))
    if op in "&|^":
        if rank > 1:
            raise _Refused(f"non-numeric operand: {NUMERIC[rank]} under {op}")
        return "bool" if left == right == "bool" else "int"
    return NUMERIC[max(rank, 1)]


def _byte_span(code_range, lines: list[str]) -> tuple[int, int, int, int]:
    """LibCST counts columns in characters, Python's ast (and astroid) in UTF-8 bytes."""
    start, end = code_range.start, code_range.end

    def col(line: int, column: int) -> int:
        return len(lines[line - 1][:column].encode("utf-8", "surrogatepass"))

    return start.line, col(start.line, start.column), end.line, col(end.line, end.column)


class _Collector(SiteCollector):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) not in SWAPPABLE:
            return
        problem = _shape_problem(node.left) or _shape_problem(node.right)
        if problem:
            self.ctx.skip(problem, self.label(node))
        else:
            self.add(node)


def _check_site(site: Site, binop: an.BinOp | None, nonlocals: set[str]) -> None:
    if binop is None:
        raise _Refused("unmapped site: astroid has no operation at this position")
    op = SWAPPABLE[type(site.node.operator)]
    allowed = {"bool", "int"} if op in "&|^" else set(NUMERIC)
    for operand in (binop.left, binop.right):
        if not _types(operand, nonlocals) <= allowed:
            raise _Refused(f"non-numeric operand: {operand.as_string()} is not an int under {op}")


def _typed_sites(module: cst.Module, ctx: FileContext, tree: an.Module, sites: list[Site]) -> list[Site]:
    positions = ctx.metadata_wrapper(module).resolve(PositionProvider)
    lines = _NEWLINE.split(ctx.code)
    binops = {(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset): n for n in tree.nodes_of_class(an.BinOp)}
    nonlocals = {name for node in tree.nodes_of_class(an.Nonlocal) for name in node.names}
    kept = []
    for site in sites:
        try:
            _check_site(site, binops.get(_byte_span(positions[site.node], lines)), nonlocals)
        except _Refused as why:
            ctx.skip(str(why), site)
        else:
            kept.append(site)
    return kept


def _swap(site: Site, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BinaryOperation:
    moved = updated.left
    level = PRECEDENCE[type(updated.operator)]
    if isinstance(moved, cst.BinaryOperation) and not moved.lpar and PRECEDENCE[type(moved.operator)] <= level:
        moved = moved.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return updated.with_changes(left=updated.right, right=moved)


class OperandPermute:
    id = "operand-permute"
    family = "spt"
    description = "Swap the operands of + * & | ^ when astroid proves both are plain builtin numbers."
    keyword_bound = False

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        sites = _Collector(ctx).collect(module)
        tree = _parse(ctx, module) if sites else None
        if tree is None:
            return []
        try:
            return _typed_sites(module, ctx, tree, sites)
        finally:
            _invalidate_cache()  # astroid's global inference cache would keep every file's tree alive

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: FileContext) -> cst.Module:
        return rewrite_sites(module, sites, ctx, _swap)
