"""Astroid proofs that an operand is a plain builtin number (operand-permute, comparison-swap).

Types come from astroid over the whole file, so a name is typed by its assignments (module
constants, ``n = int(s)``, ``self.size`` set in ``__init__``), plus two exact builtin facts:
``len(...)`` and a ``for x in range(...)`` target are ints. Every value inferred for every leaf
must be such a number; uninferable or ambiguous means no proof (so parameters are refused).
Imports from outside the standard library are uninferable (astroid would resolve them on this
tool's ``sys.path``), a star-import from one refuses the file, and ``nonlocal`` names are
uninferable (astroid misses the inner rebinding). Accepted risks: a name unbound on some path
(NameError either way) and rebinding that astroid cannot see (another module, ``setattr``).

Each file is its own world: an attribute assigned in it is recorded on its own definitions only
(`_FileBuilder`), and `forget_inference` after each pass drops what astroid cached about its nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import libcst as cst
from astroid import bases, inference_tip, objects, util
from astroid import nodes as an
from astroid.builder import AstroidBuilder, _can_assign_attr
from astroid.context import _invalidate_cache
from astroid.exceptions import AstroidSyntaxError, AttributeInferenceError, InferenceError, UseInferenceDefault
from astroid.inference_tip import clear_inference_tip_cache
from astroid.interpreter.objectmodel import ObjectModel
from astroid.manager import AstroidManager
from astroid.nodes._base_nodes import LookupMixIn

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.proofs.bindings_seen import foreign_module
from repoanchor.perturb.sites import Site, site_paths
from repoanchor.perturb.speed.node_order import in_source_order, same_shape

NUMERIC = ("bool", "int", "float", "complex")  # promotion order; bool arithmetic yields int
_NEWLINE = re.compile(r"\r\n|\r|\n")


class Refused(Exception): ...  # the message is the skip reason


class _ForeignStar(Exception):
    def __init__(self, node: an.ImportFrom) -> None:
        super().__init__(f"uninferable operand: a star-import from {node.modname or '.'} may rebind any name")


class _FileBuilder(AstroidBuilder):
    """Astroid's builder, with the file's inference tips in place before astroid infers anything, and
    ``x.attr = value`` recorded only where ``x`` is the file's own.

    Astroid records such an assignment on whatever ``x`` infers to, after importing a star-import's
    module. Built plainly, a file would import third-party modules from this tool's environment, and
    astroid's caches of modules and failed imports would keep every such file's tree alive and let one
    file's assignments type another file's operands (a verdict then depended on which files a worker
    process had analysed before)."""

    def _data_build(self, data: str, modname: str, path: str | None):
        module, rebuilder = super()._data_build(data, modname, path)
        stars = (node for node, _ in rebuilder._import_from_nodes if node.names[0][0] == "*")
        foreign = next((node for node in stars if _foreign(node)), None)
        if foreign is not None:
            raise _ForeignStar(foreign)  # before astroid imports its module
        self.tips = _tips(module)
        _apply(self.tips)  # before astroid infers assigned attributes' owners
        return module, rebuilder

    def delayed_assattr(self, node: an.AssignAttr) -> None:
        own = node.root()
        try:
            targets = list(node.expr.infer())
        except InferenceError:
            return
        for target in targets:
            records = _attribute_records(target, node.attrname, own)
            if records is not None and node not in records:
                records.append(node)


def _attribute_records(target, name: str, own: an.Module) -> list | None:
    """Where astroid would record an assignment of `name` on `target`, if `target` belongs to `own`."""
    if type(target) in (bases.Instance, objects.ExceptionInstance):
        cls = target._proxied
        if cls.root() is not own or not _can_assign_attr(cls, name):
            return None
        return cls.instance_attrs.setdefault(name, [])
    if isinstance(target, (bases.Instance, bases.Proxy, util.UninferableBase)):
        return None  # builtin containers and other proxies take no attributes here
    if getattr(target, "root", None) is None or target.root() is not own:
        return None
    holder = target.instance_attrs if getattr(target, "is_function", False) else getattr(target, "locals", None)
    return None if holder is None else holder.setdefault(name, [])


def astroid_sites(
    module: cst.Module, ctx: FileContext, sites: list[Site], kind: type, count: int
) -> list[tuple[Site, an.NodeNG | None]]:
    """Each site with astroid's node of `kind` at the site's place (None where astroid has none there); no pair
    where astroid cannot build the file (skipped, saying why). The caller runs `forget_inference` when done.

    Each site's ``data["order"]`` is its rank among the `count` LibCST nodes of its kind in pre-order, which
    maps it to astroid's node with no emission (`speed/node_order.py`); where that mapping is not trusted,
    sites are mapped by the character spans a marking emission gives them."""
    text = ctx.code
    if (tree := _parse_file(ctx, text)) is None:
        return []
    ordered = in_source_order(tree, kind, count)
    if ordered is not None:
        pairs = [(site, ordered[site.data["order"]]) for site in sites]
        if all(same_shape(site.node, node) for site, node in pairs):
            return pairs
    marked, spans = ctx.emission.spans(module, [site.node for site in sites], site_paths(module, sites))
    if marked != text and (tree := _parse_file(ctx, marked)) is None:
        return []
    at_span = _astroid_spans(tree, marked, kind)
    return [(site, at_span.get(spans[id(site.node)])) for site in sites]


def _parse_file(ctx: FileContext, text: str) -> an.Module | None:
    """The file's astroid tree with this module's inference tips, or None with the file skipped, saying why."""
    manager, builder = AstroidManager(), _FileBuilder(AstroidManager())
    try:
        tree = builder.string_build(text, modname="")
    except (AstroidSyntaxError, RecursionError) as exc:
        ctx.skip(f"astroid cannot parse: {str(exc).strip().splitlines()[-1]}")
        return None
    except _ForeignStar as refusal:
        ctx.skip(str(refusal))
        return None
    if manager.astroid_cache.get(tree.name) is tree:
        del manager.astroid_cache[tree.name]  # a per-pass tree must not outlive the pass
    _apply(builder.tips)  # again: astroid's own transforms, run last in the build, set a tip for len()
    return tree


def _apply(tips: list[tuple[an.NodeNG, Callable]]) -> None:
    for node, tip in tips:
        tip(node)


def forget_inference() -> None:
    """Drop astroid's caches keyed by node (inference, tips, name, metaclass and special-attribute lookups)
    after a pass: no later file's node will hit them, and each entry would keep this file's tree alive."""
    _invalidate_cache()
    clear_inference_tip_cache()
    LookupMixIn.lookup.cache_clear()
    an.ClassDef._metaclass_lookup_attribute.cache_clear()
    ObjectModel.attributes.cache_clear()


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
    return bool(getattr(node, "level", 0)) or any(foreign_module(name) for name in names)


def _uninferable(node: an.NodeNG, context=None) -> Iterator[util.UninferableBase]:
    yield util.Uninferable


_UNINFERABLE, _AN_INT = inference_tip(_uninferable), inference_tip(_an_int)


def _tips(tree: an.Module) -> list[tuple[an.NodeNG, Callable]]:
    """Foreign imports and nonlocal names made uninferable; len() calls and range() loop targets typed int."""
    found = list(tree.nodes_of_class((an.Import, an.ImportFrom, an.Call, an.AssignName, an.Nonlocal)))
    tips = [(node, _UNINFERABLE) for node in found if isinstance(node, (an.Import, an.ImportFrom)) and _foreign(node)]
    tips += [(node, _AN_INT) for node in found if isinstance(node, an.Call) and getattr(node.func, "name", "") == "len"]
    loops = (an.For, an.Comprehension)
    tips += [(node, _AN_INT) for node in found if isinstance(node, an.AssignName) and isinstance(node.parent, loops)]
    nonlocals = {name for node in found if isinstance(node, an.Nonlocal) for name in node.names}
    if nonlocals:
        tips += [(node, _UNINFERABLE) for node in tree.nodes_of_class(an.Name) if node.name in nonlocals]
    return tips


def number_types(node: an.NodeNG) -> set[str]:
    """The builtin numeric types `node` may evaluate to, or Refused."""
    if isinstance(node, an.Const) and type(node.value).__name__ in NUMERIC:
        return {type(node.value).__name__}
    if isinstance(node, (an.Name, an.Attribute)):
        return _leaf_types(node)
    if isinstance(node, an.UnaryOp):
        inner = number_types(node.operand)
        if node.op == "not":
            return {"bool"}
        if node.op == "~" and not inner <= {"bool", "int"}:
            raise Refused(f"non-numeric operand: ~ over {'/'.join(sorted(inner))}")
        return {_combine("+", kind, "int") for kind in inner}
    if isinstance(node, an.BinOp):
        lefts, rights = number_types(node.left), number_types(node.right)
        return {_combine(node.op, left, right) for left in lefts for right in rights}
    raise Refused(f"non-numeric operand: {node.as_string()}")


def _leaf_types(node: an.Name | an.Attribute) -> set[str]:
    if isinstance(node, an.Attribute):
        _require_plain_attribute(node)
    try:
        values = list(node.infer())
    except (InferenceError, RecursionError) as exc:
        raise Refused(f"uninferable operand: {node.as_string()}") from exc
    if any(isinstance(value, util.UninferableBase) for value in values):
        raise Refused(f"uninferable operand: {node.as_string()}")
    kinds = {(v.pytype() if hasattr(v, "pytype") else type(v).__name__).removeprefix("builtins.") for v in values}
    if not kinds <= set(NUMERIC):
        raise Refused(f"non-numeric operand: {node.as_string()} may be {'/'.join(sorted(kinds - set(NUMERIC)))}")
    return kinds


def _require_plain_attribute(node: an.Attribute) -> None:
    if isinstance(node.expr, an.Attribute):
        _require_plain_attribute(node.expr)
    try:
        owners = list(node.expr.infer())
        if any(isinstance(owner, util.UninferableBase) or not hasattr(owner, "getattr") for owner in owners):
            raise Refused(f"uninferable operand: {node.expr.as_string()}")
        definitions = [d for owner in owners for d in owner.getattr(node.attrname)]
    except (InferenceError, AttributeInferenceError, RecursionError) as exc:
        raise Refused(f"uninferable operand: {node.as_string()}") from exc
    if not all(isinstance(d, (an.AssignName, an.AssignAttr, an.Const)) for d in definitions):
        raise Refused(f"effectful operand: {node.as_string()} is not a plain attribute (property, method...)")


def _combine(op: str, left: str, right: str) -> str:
    rank = max(NUMERIC.index(left), NUMERIC.index(right))
    if op in "&|^":
        if rank > 1:
            raise Refused(f"non-numeric operand: {NUMERIC[rank]} under {op}")
        return "bool" if left == right == "bool" else "int"
    return NUMERIC[max(rank, 1)]
