"""What dead-method must know of a class before adding to it: its members and its ancestors' (this module,
the project's class index, the standard library and builtins by import), or why some ancestor cannot be
known, and whether code of the project lists the class's members (see `dead_method` for each refusal).
"""

from __future__ import annotations

import ast
import builtins
import sys
import types
import warnings

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.bindings import bound_names, dotted_name, import_origins, stdlib_object
from repoanchor.perturb.context import FileContext
from repoanchor.perturb.naming import identifiers_in
from repoanchor.perturb.source.enumerations import enumerated_classes, may_enumerate
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.traversal.walk import walk

FRAMEWORK_BASES = frozenset(
    "BaseModel GenericModel Schema Serializer Document EmbeddedDocument Enum IntEnum StrEnum Flag IntFlag"
    " NamedTuple TypedDict Protocol ABC ABCMeta Model Form ModelForm Base DeclarativeBase".split()
)
DYNAMIC = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__"})
ALWAYS_INHERITED = frozenset(dir(object)) | frozenset(dir(type))


def members_of(cls: cst.ClassDef) -> set[str]:
    """Names the class body binds: def/class names, and every identifier of other statements. Blocks at class
    level (`if`, `try`, `with`, loops: if-true-wrap and try-reraise-wrap put methods in them) are read through to
    their own statements: a method inside one is a name, not its whole body's words (dead-string-assign's
    strings among them, which had refused every keyword after those transforms)."""
    return _bound_in(cls.body.body)


def _bound_in(statements) -> set[str]:
    names: set[str] = set()
    for stmt in statements:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        elif isinstance(stmt, _BLOCKS):
            names |= _header_words(stmt) | _bound_in(_inner_statements(stmt))
        else:
            names |= identifiers_in(code_for_node(stmt))
    return names


_BLOCKS = (cst.If, cst.Try, cst.TryStar, cst.With, cst.For, cst.While)


def _inner_statements(block) -> list:
    """The statements of a block and of its else, elif, except and finally parts."""
    parts = [block.body, getattr(block, "orelse", None), getattr(block, "finalbody", None)]
    parts += list(getattr(block, "handlers", ()))
    inner = []
    for part in filter(None, parts):
        if isinstance(part, cst.If):  # elif: its test and its statements
            inner += [cst.Expr(part.test), *_inner_statements(part)]
        else:  # a suite, or an else/finally/except whose suite holds the statements
            suite = part if isinstance(part, cst.BaseSuite) else part.body
            inner += list(suite.body)
    return inner


def _header_words(block) -> set[str]:
    """Identifiers of a block's own headers (an `if` test, `with` items, a loop's target, `except ... as e`):
    they may bind names at class level."""
    parts = [getattr(block, "test", None), getattr(block, "target", None), getattr(block, "iter", None)]
    parts += list(getattr(block, "items", ()))
    parts += [piece for handler in getattr(block, "handlers", ()) for piece in (handler.type, handler.name)]
    return set().union(*(identifiers_in(code_for_node(part)) for part in parts if part is not None))


def _enumerated_here(ctx: FileContext) -> set[str]:
    """The classes this very module lists the members of (the project's index may not hold it: one file)."""
    if not may_enumerate(ctx.code):
        return set()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return enumerated_classes(ast.parse(ctx.code))
    except (SyntaxError, ValueError, RecursionError):
        return set()


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


class Lineage:
    """Members of a class and of all its ancestors, or why some ancestor cannot be known."""

    def __init__(self, module: cst.Module, ctx: FileContext) -> None:
        self.module, self.ctx, self.project = module, ctx, ctx.project
        self.local: dict[str, list[cst.ClassDef]] = _ClassIndex()
        walk(self.local, module)
        self.imports = import_origins(module)
        self.bound: tuple[set[str], bool] | None = None
        here = set() if ctx.project.indexed else _enumerated_here(ctx)  # passes add no listing to a file
        self.enumerated = set(ctx.project.enumerated) | here

    def lineage_of(self, cls: cst.ClassDef) -> tuple[set[str], str | None]:
        members = set(ALWAYS_INHERITED)
        return members, self._local(cls, members, set())

    def _local(self, cls: cst.ClassDef, members: set[str], seen: set) -> str | None:
        if id(cls) in seen:
            return None
        seen.add(id(cls))
        own = members_of(cls)
        members |= own
        if cls.name.value in self.enumerated:
            return f"enumerated: the members of {cls.name.value} are listed (dir, vars, __dict__, getmembers)"
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
            return f"unknown base: {code_for_node(expr)} is not a name"
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
        if name in self.enumerated:
            return f"enumerated: the members of {name} are listed (dir, vars, __dict__, getmembers)"
        own = set(self.project.class_members.get(name, ()))
        members |= own
        problem = _member_problem(own, name)
        for base in self.project.class_bases.get(name, []):
            problem = problem or self._project(base, members, seen)
        return problem
