"""dead-method: append ``def <keyword>(self, *args, **kwargs)`` with a dead body to a class.

The method's body is ``if args is None: return kwargs`` then ``return None``: ``args`` is
always a tuple, so the branch never runs, and the body reads no global that could be rebound.
Nothing calls the method, so only code that enumerates or probes class members could notice.

The keyword must be a valid, NFKC-normalised identifier that is not a keyword, soft keyword
(``match``, ``case``, ``type``, ``_``), dunder or ``__``-private name (mangled), nor start with
``test`` (pytest and unittest would collect and run it); otherwise it is refused for the file
[keyword]. A class is refused, with the reason class in brackets, when:

- [empty body] its body is only ``pass``/``...``/docstring: a marker or exception class;
- [metaclass] it, or a known ancestor, has a ``metaclass=`` or a non-``type`` metaclass, which
  may register or validate members; [class keyword] other class keywords go to some
  ancestor's ``__init_subclass__``;
- [class decorator] a decorator other than a known member-preserving one (``dataclass``,
  ``total_ordering``, ``final``, attrs' ``define``/``frozen``/``s``) may enumerate members;
- [dynamic attributes] it or an ancestor defines ``__getattr__``, ``__getattribute__``,
  ``__setattr__``, ``__delattr__`` or ``__slots__``: the new name could shadow a dynamic attribute;
- [__init_subclass__] it or a known ancestor defines ``__init_subclass__``, which sees members;
- [framework base] it or an ancestor is named like a model/schema/enum/protocol base
  (pydantic, marshmallow, mongoengine, enum, typing, abc, Django, SQLAlchemy), whose machinery
  turns class attributes into fields, members or abstract requirements;
- [unknown base] a base cannot be resolved: ancestors are found by name among the module's
  classes, then in ``ProjectInfo.class_members``/``class_bases``, then, for a base imported from
  a standard-library module (or a builtin), by importing that module and reading ``dir()``;
- [name exists] the class or an ancestor already has the name (so the method would override
  it); names on ``object`` and ``type`` always count as inherited.
"""

from __future__ import annotations

import builtins
import importlib
import keyword
import sys
import unicodedata
import warnings
from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from repoanchor.perturb.context import FileContext, ProjectInfo
from repoanchor.perturb.naming import identifiers_in
from repoanchor.perturb.sites import Site, SiteCollector
from repoanchor.perturb.transforms._common import is_docstring, rebound_names

FRAMEWORK_BASES = frozenset({
    "BaseModel", "GenericModel", "Schema", "Serializer", "Document", "EmbeddedDocument", "Enum", "IntEnum",
    "StrEnum", "Flag", "IntFlag", "NamedTuple", "TypedDict", "Protocol", "ABC", "ABCMeta",
    "Model", "Form", "ModelForm", "Base", "DeclarativeBase",
})
DYNAMIC = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__"})
ALWAYS_INHERITED = frozenset(dir(object)) | frozenset(dir(type))
SAFE_DECORATORS = frozenset({"dataclass", "total_ordering", "final", "define", "frozen", "s", "attrs"})
SOFT_KEYWORDS = frozenset(keyword.softkwlist) | {"_", "case", "match", "type"}
SIDE_EFFECT_IMPORTS = frozenset({"antigravity", "this", "__hello__", "__phello__"})
_EMPTY = cst.Module(body=[])


def keyword_problem(word: str) -> str | None:
    if not word.isidentifier() or unicodedata.normalize("NFKC", word) != word:
        return "not a plain identifier"
    if keyword.iskeyword(word) or word in SOFT_KEYWORDS:
        return "a Python keyword or soft keyword"
    if word.startswith("__"):
        return "a dunder or class-private name"
    if word.lower().startswith("test"):
        return "a test-collected name"
    return None


def _members(cls: cst.ClassDef) -> set[str]:
    """Names the class body binds: def/class names, and every identifier of other statements."""
    body = cls.body.body
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        else:
            names |= identifiers_in(_EMPTY.code_for_node(stmt))
    return names


def _placeholder_only(cls: cst.ClassDef) -> bool:
    smalls = [cls.body] if isinstance(cls.body, cst.SimpleStatementSuite) else cls.body.body
    flat = [s for line in smalls for s in getattr(line, "body", [line])] if smalls else []
    return all(isinstance(s, (cst.Pass, cst.Expr)) and (isinstance(s, cst.Pass) or is_docstring(s)
               or isinstance(s.value, cst.Ellipsis)) for s in flat)


def _dotted(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        head = _dotted(expr.value)
        return f"{head}.{expr.attr.value}" if head else None
    return None


def _import_origins(module: cst.Module) -> dict[str, set[str]]:
    """Local name -> dotted origins it is imported from (relative ones start with a dot)."""
    origins: dict[str, set[str]] = {}
    for node in m.findall(module, m.Import() | m.ImportFrom()):
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            continue
        prefix = ""
        if isinstance(node, cst.ImportFrom):
            prefix = "." * len(node.relative) + (_EMPTY.code_for_node(node.module) if node.module else "")
            prefix = prefix if prefix.endswith(".") else prefix + "."
        for alias in node.names:
            full = prefix + _EMPTY.code_for_node(alias.name)
            local = alias.asname.name.value if alias.asname else full.split(".")[0]
            origin = full if alias.asname or isinstance(node, cst.ImportFrom) else local
            origins.setdefault(local, set()).add(origin)
    return origins


def _runtime_class(path: str) -> object | None:
    """The object at a standard-library dotted path, or None; imports only stdlib modules."""
    parts = path.split(".")
    if parts[0] not in sys.stdlib_module_names or parts[0] in SIDE_EFFECT_IMPORTS:
        return None
    for cut in range(len(parts), 0, -1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        return obj
    return None
