"""dead-method: append ``def <keyword>(self, *args, **kwargs)`` with a dead body to a class.

The body (``if args is None: return kwargs``, ``return None``) never takes its branch and reads
no global; nothing calls it, so only code that enumerates or probes members could notice it.

[keyword] (whole file) the keyword must be an NFKC-normal identifier, not a keyword or soft
keyword (``match``, ``case``, ``type``, ``_``), not ``__``-prefixed (dunders are protocol hooks,
others get mangled), not ``test``-prefixed (pytest/unittest would run it). A class is refused if:

- [empty body] its body is only ``pass``/``...``/docstring as written (an earlier pass of a stack may have
  added a dead statement): a marker or exception class, or a shell filled at run time;
- [options class] a ``Meta`` or ``Config`` class in another class's body: frameworks read its attributes as
  the outer class's options (Django's model ``Options`` raises TypeError on any it does not know, so every
  import of the model fails);
- [metaclass] it or a known ancestor has ``metaclass=`` or a non-``type`` metaclass, which may
  register or validate members; [class keyword] keywords feed some ``__init_subclass__``;
- [class decorator] a decorator other than ``dataclass``, ``total_ordering``, ``final`` or attrs'
  ``define``/``frozen``/``s`` may enumerate or replace members;
- [dynamic attributes] it or an ancestor defines ``__getattr__``, ``__getattribute__``,
  ``__setattr__``, ``__delattr__`` or ``__slots__``: the name may already resolve dynamically;
- [__init_subclass__] it or a known ancestor defines ``__init_subclass__``, which sees members;
- [framework base] it or an ancestor is named like a pydantic/marshmallow/mongoengine/enum/typing/
  abc/Django/SQLAlchemy base, whose machinery turns attributes into fields or members;
- [unknown base] a base is found neither among the module's classes, nor in ProjectInfo's
  class_members/class_bases, nor (stdlib import or builtin) by importing it and reading ``dir()``;
- [enumerated] code of the project (tests included: ``ProjectInfo.enumerated``) or of this module lists
  the members of the class or an ancestor (``dir``, ``vars``, ``inspect.getmembers``, ``__dict__`` on the
  class, on ``self``/``type(self)`` in its methods, or on an instance made in the same function): a
  registry or a test walking every attribute would find the new method;
- [name exists] the class or an ancestor (``object`` and ``type`` always) has the name.
"""

from __future__ import annotations

import codecs
import keyword
import unicodedata
from functools import partial

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.bindings import dotted_name
from repoanchor.perturb.class_lineage import Lineage
from repoanchor.perturb.context import FileContext
from repoanchor.perturb.sites import Site, SiteCollector, SiteRewrite, SiteTransform
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.traversal.walk import walk

OPTIONS_CLASSES = frozenset({"Meta", "Config"})
SAFE_DECORATORS = frozenset({"dataclass", "total_ordering", "final", "define", "frozen", "s", "attrs"})
SOFT_KEYWORDS = frozenset(keyword.softkwlist) | {"_", "case", "match", "type"}
PLACEHOLDER = m.Pass() | m.Expr(m.SimpleString() | m.ConcatenatedString() | m.Ellipsis())
SIMPLE = (cst.SimpleStatementLine, cst.SimpleStatementSuite)


def keyword_problem(word: str, encoding: str = "utf-8") -> str | None:
    """Why `word` cannot name the method, or None."""
    checks = (
        (not word.isidentifier() or unicodedata.normalize("NFKC", word) != word, "not a plain identifier"),
        (not word.isascii() and codecs.lookup(encoding).name != "utf-8", f"not encodable in this {encoding} file"),
        (keyword.iskeyword(word) or word in SOFT_KEYWORDS, "a Python keyword or soft keyword"),
        (word.startswith("__"), "a dunder or class-private name"),
        (word.lower().startswith("test"), "a test-collected name"),
    )
    return next((why for bad, why in checks if bad), None)


def _placeholder_only(cls: cst.ClassDef) -> bool:
    lines = [cls.body] if isinstance(cls.body, cst.SimpleStatementSuite) else cls.body.body
    smalls = [s for line in lines for s in (line.body if isinstance(line, SIMPLE) else [line])]
    return all(m.matches(s, PLACEHOLDER) for s in smalls)


class _Classes(cst.CSTVisitor):
    WALK = "statements"

    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.ClassDef] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.found.append(node)
        return True


def _classes(module: cst.Module) -> list[cst.ClassDef]:
    """Every class of the module, in the order of the source."""
    visitor = _Classes()
    walk(visitor, module)
    return visitor.found


def _empty_as_written(ctx: FileContext, module: cst.Module) -> set[int]:
    """ids of `module`'s classes whose body was only placeholders before the earlier passes over the file: in a
    stack, dead-code's dead `if` in such a body must not make a marker or a shell filled
    at run time (SQLAlchemy's `as_interface`, whose test lists the shell's public names) look like a class.
    No pass adds or drops a class, so the n-th class is the n-th as written; where the counts differ (a loop
    unrolled around a class), a class is matched by name."""
    if ctx.original is None:
        return set()
    before, now = _classes(ctx.original), _classes(module)
    if len(before) == len(now):
        return {id(cls) for cls, was in zip(now, before, strict=True) if _placeholder_only(was)}
    names = {cls.name.value for cls in before if _placeholder_only(cls)}
    return {id(cls) for cls in now if cls.name.value in names}


def _decorator_problem(cls: cst.ClassDef) -> str | None:
    for decorator in cls.decorators:
        target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        name = (dotted_name(target) or "").rpartition(".")[2]
        if name not in SAFE_DECORATORS:
            return f"class decorator: @{name or code_for_node(target)} may enumerate or replace members"
    return None


class _Collector(SiteCollector, Lineage):
    WALK = "statements"  # only statements are sites: never descend into expressions

    def __init__(self, module: cst.Module, ctx: FileContext, words: list[str]) -> None:
        SiteCollector.__init__(self)
        Lineage.__init__(self, module, ctx)
        self.words = words
        self.empty_as_written = _empty_as_written(ctx, module)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        super().visit_ClassDef(node)
        empty = _placeholder_only(node) or id(node) in self.empty_as_written
        members, problem = set(), "empty body: only pass, ... or a docstring" if empty else None
        problem = problem or _decorator_problem(node) or self._options_problem(node)
        if problem is None:
            members, problem = self.lineage_of(node)
        free = [word for word in self.words if word not in members]
        if problem is None and not free:
            problem = f"name exists: {', '.join(self.words)} already defined on {node.name.value} or an ancestor"
        if problem:
            self.ctx.skip(problem, self.label(node))
        else:
            self.add(node, words=free)
        return True

    def _options_problem(self, node: cst.ClassDef) -> str | None:
        owner = next((a for a in reversed(self.ancestors) if isinstance(a, (cst.ClassDef, cst.FunctionDef))), None)
        if isinstance(owner, cst.ClassDef) and node.name.value in OPTIONS_CLASSES:
            return (
                f"options class: {owner.name.value}.{node.name.value} holds options its outer class's machinery reads"
            )
        return None


def _method(word: str) -> cst.BaseStatement:
    source = f"def {word}(self, *args, **kwargs):\n    if args is None:\n        return kwargs\n    return None\n"
    return cst.parse_statement(source).with_changes(leading_lines=[cst.EmptyLine(indent=False)])


def _append(ctx: FileContext, site: Site, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
    body = updated.body
    if isinstance(body, cst.SimpleStatementSuite):
        body = cst.IndentedBlock([cst.SimpleStatementLine(body.body)], header=body.trailing_whitespace)
    method = _method(ctx.rng.choice(site.data["words"]))
    return updated.with_changes(body=body.with_changes(body=[*body.body, method]))


class DeadMethod(SiteTransform):
    id = "dead-method"
    description = "Append an uncalled method named after the keyword, with a dead body, to a class."
    keyword_bound = True

    def candidates(self, module: cst.Module, ctx: FileContext) -> list[Site]:
        problems = {word: keyword_problem(word, module.encoding) for word in ctx.keywords}
        for word, problem in problems.items():
            if problem:
                ctx.skip(f"keyword: {word!r} is {problem}")
        words = [word for word, problem in problems.items() if not problem]
        if not words:
            return []
        return _Collector(module, ctx, words).collect(module)

    def rewriter(self, module: cst.Module, ctx: FileContext) -> SiteRewrite:
        return partial(_append, ctx)
