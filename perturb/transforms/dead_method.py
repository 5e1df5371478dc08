"""dead-method: append ``def <keyword>(self, *args, **kwargs)`` with a dead body to a class.

The body (``if args is None: return kwargs``, ``return None``) never takes its branch and reads
no global; nothing calls it, so only code that enumerates or probes members could notice it.

[keyword] (whole file) the keyword must be an NFKC-normal identifier, not a keyword or soft
keyword (``match``, ``case``, ``type``, ``_``), not ``__``-prefixed (dunders are protocol hooks,
others get mangled), not ``test``-prefixed (pytest/unittest would run it). A class is refused if:

- [empty body] its body is only ``pass``/``...``/docstring: a marker or exception class;
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
- [name exists] the class or an ancestor (``object`` and ``type`` always) has the name.
"""

from __future__ import annotations

import builtins
import codecs
import keyword
import sys
import types
import unicodedata
from functools import partial

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.context import FileContext
from repoanchor.perturb.naming import identifiers_in
from repoanchor.perturb.sites import Site, SiteCollector, SiteRewrite, SiteTransform
from repoanchor.perturb.transform_checks import bound_names, dotted_name, import_origins, stdlib_object
from repoanchor.perturb.walk import walk

FRAMEWORK_BASES = frozenset(
    "BaseModel GenericModel Schema Serializer Document EmbeddedDocument Enum IntEnum StrEnum Flag IntFlag"
    " NamedTuple TypedDict Protocol ABC ABCMeta Model Form ModelForm Base DeclarativeBase".split()
)
DYNAMIC = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__"})
ALWAYS_INHERITED = frozenset(dir(object)) | frozenset(dir(type))
SAFE_DECORATORS = frozenset({"dataclass", "total_ordering", "final", "define", "frozen", "s", "attrs"})
SOFT_KEYWORDS = frozenset(keyword.softkwlist) | {"_", "case", "match", "type"}
PLACEHOLDER = m.Pass() | m.Expr(m.SimpleString() | m.ConcatenatedString() | m.Ellipsis())
SIMPLE = (cst.SimpleStatementLine, cst.SimpleStatementSuite)
_EMPTY = cst.Module(body=[])


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


def _members(cls: cst.ClassDef) -> set[str]:
    """Names the class body binds: def/class names, and every identifier of other statements."""
    names = {stmt.name.value for stmt in cls.body.body if isinstance(stmt, (cst.FunctionDef, cst.ClassDef))}
    others = [stmt for stmt in cls.body.body if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef))]
    return names.union(*(identifiers_in(_EMPTY.code_for_node(stmt)) for stmt in others))


def _placeholder_only(cls: cst.ClassDef) -> bool:
    lines = [cls.body] if isinstance(cls.body, cst.SimpleStatementSuite) else cls.body.body
    smalls = [s for line in lines for s in (line.body if isinstance(line, SIMPLE) else [line])]
    return all(m.matches(s, PLACEHOLDER) for s in smalls)


def _runtime_problem(obj: object, label: str, members: set[str]) -> str | None:
    if not isinstance(obj, type):
        return f"unknown base: {label} is not a class"
    if type(obj) is not type:
        return f"metaclass: {label} uses {type(obj).__name__}"
    for klass in obj.__mro__[:-1]:
        if "__init_subclass__" in vars(klass):
            return f"__init_subclass__: inherited from {klass.__name__}"
        hooks = [n for n in sorted(DYNAMIC) if isinstance(vars(klass).get(n), types.FunctionType)]
        if hooks:
            return f"dynamic attributes: {hooks[0]} inherited from {klass.__name__}"
    members |= set(dir(obj))
    return None


def _member_problem(own: set[str], label: str) -> str | None:
    hooks = sorted(own & DYNAMIC)
    if hooks:
        return f"dynamic attributes: {label} defines {hooks[0]}"
    if "__init_subclass__" in own:
        return f"__init_subclass__: {label} defines it"
    return None


class _ClassIndex(dict):
    """Class name -> every class of that name in the module, filled by `walk`."""

    WALK = "statements"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.setdefault(node.name.value, []).append(node)


class _Lineage:
    """Members of a class and of all its ancestors, or why some ancestor cannot be known."""

    def __init__(self, module: cst.Module, ctx: FileContext) -> None:
        self.module, self.ctx, self.project = module, ctx, ctx.project
        self.local: dict[str, list[cst.ClassDef]] = _ClassIndex()
        walk(self.local, module)
        self.imports = import_origins(module)
        self.bound: tuple[set[str], bool] | None = None

    def lineage_of(self, cls: cst.ClassDef) -> tuple[set[str], str | None]:
        members = set(ALWAYS_INHERITED)
        return members, self._local(cls, members, set())

    def _local(self, cls: cst.ClassDef, members: set[str], seen: set) -> str | None:
        if id(cls) in seen:
            return None
        seen.add(id(cls))
        own = _members(cls)
        members |= own
        if cls.keywords:
            metaclass = any(m.matches(arg.keyword, m.Name("metaclass")) for arg in cls.keywords)
            return f"{'metaclass' if metaclass else 'class keyword'}: {cls.name.value} has class keywords"
        problem = _member_problem(own, cls.name.value)
        for arg in cls.bases:
            problem = problem or self._base(arg.value, members, seen)
        return problem

    def _base(self, expr: cst.BaseExpression, members: set[str], seen: set) -> str | None:
        dotted = dotted_name(expr.value if isinstance(expr, cst.Subscript) else expr)
        if dotted is None:
            return f"unknown base: {_EMPTY.code_for_node(expr)} is not a name"
        head, last = dotted.split(".")[0], dotted.rpartition(".")[2]
        if last in FRAMEWORK_BASES:
            return f"framework base: {last}"
        nodes = self.local.get(last, []) if head in self.local else []
        paths = sorted(origin + dotted[len(head) :] for origin in self.imports.get(head, ()))
        problems = [self._local(node, members, seen) for node in nodes]
        problems += [self._imported(path, members, seen) for path in paths]
        if head in self.local and not nodes:
            problems.append(f"unknown base: {dotted}")
        elif not nodes and not paths:
            problems.append(self._unimported(dotted, members, seen))
        return next(filter(None, problems), None)

    def _unimported(self, name: str, members: set[str], seen: set) -> str | None:
        if self.bound is None:  # one scan of the module, only for files that need it
            self.bound = bound_names(self.module)
        if name.split(".")[0] in self.bound[0] or self.bound[1]:
            return f"unknown base: {name} may be rebound in this module (assignment, parameter or star-import)"
        return self._project(name.rpartition(".")[2], members, seen)

    def _imported(self, path: str, members: set[str], seen: set) -> str | None:
        if path.split(".")[0] in sys.stdlib_module_names:
            return _runtime_problem(stdlib_object(path), path, members)
        return self._project(path.rpartition(".")[2], members, seen)

    def _project(self, name: str, members: set[str], seen: set) -> str | None:
        if name in FRAMEWORK_BASES:
            return f"framework base: {name}"
        if name not in self.project.class_members and name not in self.project.class_bases:
            if isinstance(getattr(builtins, name, None), type):
                return _runtime_problem(getattr(builtins, name), name, members)
            return f"unknown base: {name} is neither in this module, the project nor the standard library"
        if name in seen:  # names (str) and local classes (id) share one set
            return None
        seen.add(name)
        own = set(self.project.class_members.get(name, ()))
        members |= own
        problem = _member_problem(own, name)
        for base in self.project.class_bases.get(name, []):
            problem = problem or self._project(base, members, seen)
        return problem


def _decorator_problem(cls: cst.ClassDef) -> str | None:
    for decorator in cls.decorators:
        target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        name = (dotted_name(target) or "").rpartition(".")[2]
        if name not in SAFE_DECORATORS:
            return f"class decorator: @{name or _EMPTY.code_for_node(target)} may enumerate or replace members"
    return None


class _Collector(SiteCollector, _Lineage):
    WALK = "statements"  # only statements are sites: never descend into expressions

    def __init__(self, module: cst.Module, ctx: FileContext, words: list[str]) -> None:
        SiteCollector.__init__(self)
        _Lineage.__init__(self, module, ctx)
        self.words = words

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        super().visit_ClassDef(node)
        members, problem = set(), "empty body: only pass, ... or a docstring" if _placeholder_only(node) else None
        problem = problem or _decorator_problem(node)
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
