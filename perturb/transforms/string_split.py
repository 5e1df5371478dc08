"""string-split: ``'abcd'`` becomes ``('ab' + 'cd')``, cut at an index drawn from the pass RNG.

Sites are one-line (not triple-quoted) str literals of at least 4 code points, without a ``b``
or ``r`` prefix (``u`` is kept on both halves); with keywords, only those containing one (the
others are reported as "no keyword"). CPython folds the sum back into one constant, so the
compiled code is unchanged.

Each half is re-escaped from the decoded value, so ``ast.literal_eval`` gives it back exactly:
quote and backslash are escaped, ``\\n \\r \\t`` by name, other control characters, lone
surrogates and non-printable characters by ``\\x``/``\\u``/``\\U`` with a fixed width (so a NUL
before a digit never reads as an octal escape), and a non-ASCII character stays raw only if the
original spelling had it raw (so the file's encoding can hold it). Python strings are code
points, so a cut never falls inside a character; a non-BMP character is one code point, and a
surrogate pair written as escapes is two code points that stay two code points either way.

Refused, with a reason:
- bare string statements: docstrings (``__doc__`` would become None; a module docstring before
  ``from __future__`` would turn the import into a SyntaxError) and attribute docstrings;
- annotations, string forward references included (``from __future__ import annotations``
  keeps the source text, and typing tools read it), and other type expressions that type
  checkers need as literals: ``Literal[...]``, ``TypeAlias`` values, ``type X = ...`` and the
  arguments of ``TypeVar``/``NewType``/``namedtuple``-like calls and ``cast``;
- match patterns and implicit concatenation parts (a sum is not valid syntax there);
- strings inside f-string replacement fields (before 3.12 no backslash or same quote there);
- attribute bases (``"sep".join``) and ``%`` operands: still correct at runtime, but linters
  check ``"...".format`` and ``"..." % x`` only on literals, so a split would hide their errors;
- operands of ``is``/``is not``: identity of constants is an implementation detail;
- arguments of gettext calls (``_("one")``): xgettext and Babel extract messages from the literals;
- a string compared with ``__name__``: ``if __name__ == "__main__":`` is matched as text (coverage's exclusions,
  linters, and the tree transforms' refusal of a module that may run as a script: split, tabulate's
  ``__init__`` got proxies and broke ``python tabulate/__init__.py``);
- ``__all__``/``__slots__`` contents: pyright, mypy and Sphinx read them without running code.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from repoanchor.perturb.bindings import dotted_name
from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, rewrite_sites
from repoanchor.perturb.speed.literals import string_value
from repoanchor.perturb.transform_checks import compares_name, is_gettext_call

MIN_LENGTH = 4
NAMED_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
ENCLOSING = {
    cst.Annotation: "annotation: typing tools and future-annotations read the source text",
    cst.FormattedStringExpression: "f-string: replacement fields cannot hold every escape before 3.12",
    cst.MatchValue: "match pattern: patterns must be literals",
    cst.MatchMappingElement: "match pattern: patterns must be literals",
    cst.TypeAlias: "type expression: a type alias value is read by type checkers",
}
TYPING_CALLS = frozenset(
    {"TypeVar", "ParamSpec", "TypeVarTuple", "NewType", "NamedTuple", "namedtuple", "TypedDict", "cast"}
)
DECLARED = frozenset({"__all__", "__slots__"})


def _direct_refusal(parent: cst.CSTNode, grandparent: cst.CSTNode | None) -> str | None:
    """Why the string's position as a direct child of `parent` forbids the split, or None."""
    if isinstance(parent, cst.Expr):
        return "docstring: a bare string statement is a docstring or attribute docstring"
    if isinstance(parent, cst.ConcatenatedString):
        return "implicit concatenation: a sum is not valid between adjacent literals"
    if isinstance(parent, cst.Attribute):
        return "attribute base: linters check methods such as .format only on literals"
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Modulo):
        return "format operand: linters check % formatting only on literals"
    comparison = grandparent if isinstance(parent, cst.ComparisonTarget) else parent
    if isinstance(comparison, cst.Comparison) and any(
        isinstance(target.operator, (cst.Is, cst.IsNot)) for target in comparison.comparisons
    ):
        return "identity comparison: identity of constants is an implementation detail"
    if isinstance(comparison, cst.Comparison) and compares_name(comparison, "__name__"):
        return "main guard: coverage, linters and script detection match `__name__ == '__main__'` as text"
    if isinstance(parent, cst.Arg) and isinstance(grandparent, cst.Call):
        name = dotted_name(grandparent.func) or ""
        if name.rpartition(".")[2] in TYPING_CALLS:
            return "type expression: type checkers need the arguments of this call as literals"
        if is_gettext_call(name):
            return "translation string: xgettext and Babel extract the literal arguments of gettext calls"
    return None


def _enclosing_refusal(ancestors: Sequence[cst.CSTNode]) -> str | None:
    """Why a construct around the string forbids the split, or None."""
    for ancestor in reversed(ancestors):
        reason = ENCLOSING.get(type(ancestor))
        if reason:
            return reason
        if isinstance(ancestor, cst.Subscript) and (dotted_name(ancestor.value) or "").endswith("Literal"):
            return "type expression: Literal[...] must hold literals"
        if isinstance(ancestor, cst.Call) and dotted_name(ancestor.func) in ("__all__.append", "__all__.extend"):
            return "static declaration: __all__ and __slots__ are read by tools without running code"
        if isinstance(ancestor, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            return _assignment_refusal(ancestor)  # nothing above a statement can enclose an expression
    return None


def _assignment_refusal(node: cst.Assign | cst.AugAssign | cst.AnnAssign) -> str | None:
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    if any(isinstance(target, cst.Name) and target.value in DECLARED for target in targets):
        return "static declaration: __all__ and __slots__ are read by tools without running code"
    if isinstance(node, cst.AnnAssign) and (dotted_name(node.annotation.annotation) or "").endswith("TypeAlias"):
        return "type expression: a type alias value is read by type checkers"
    return None


class _Collector(SiteCollector):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if node.prefix.lower() not in ("", "u") or len(node.quote) != 1:
            return
        value = string_value(node)
        if len(value) < MIN_LENGTH:
            return
        if self.ctx.keywords and not any(keyword in value for keyword in self.ctx.keywords):
            self.ctx.skip("no keyword: the string contains none of the keywords", self.label(node))
            return
        grandparent = self.ancestors[-2] if len(self.ancestors) > 1 else None
        reason = _direct_refusal(self.ancestors[-1], grandparent) or _enclosing_refusal(self.ancestors)
        if reason:
            self.ctx.skip(reason, self.label(node))
        else:
            self.add(node, value=value)


def _escape(char: str, quote: str, raw_ok: set[str]) -> str:
    if char in NAMED_ESCAPES:
        return NAMED_ESCAPES[char]
    if char == quote:
        return "\\" + char
    if char.isprintable() and (char.isascii() or char in raw_ok):
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _literal(text: str, quote: str, prefix: str, raw_ok: set[str]) -> str:
    """Source of a `quote`-delimited str literal whose value is exactly `text`."""
    return prefix + quote + "".join(_escape(char, quote, raw_ok) for char in text) + quote


def _split(node: cst.SimpleString, value: str, cut: int) -> cst.BinaryOperation:
    raw_ok = set(node.value)
    halves = [cst.SimpleString(_literal(part, node.quote, node.prefix, raw_ok)) for part in (value[:cut], value[cut:])]
    return cst.BinaryOperation(
        left=halves[0],
        operator=cst.Add(whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")),
        right=halves[1],
        lpar=node.lpar or [cst.LeftParen()],
        rpar=node.rpar or [cst.RightParen()],
    )


class StringSplit:
    id = "string-split"
    family = "spt"
    description = "Split a str literal in two at a random index: 'abcd' becomes ('ab' + 'cd')."
    keyword_bound = False

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        return _Collector(ctx).collect(module)

    def apply(self, module: cst.Module, sites: Sequence[Site], ctx: FileContext) -> cst.Module:
        cuts = {id(site.node): ctx.rng.randint(1, len(site.data["value"]) - 1) for site in sites}
        return rewrite_sites(
            module, sites, ctx, lambda site, _, updated: _split(updated, site.data["value"], cuts[id(site.node)])
        )
