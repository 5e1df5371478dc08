"""The loader a module gets, the subscripts that replace its literals, and the JSON it reads.

The loader is one assignment placed right after the module docstring and ``from __future__``
imports, so it runs before any code that could use a constant. It binds exactly one name (a
dict) and nothing else: modules come from ``__import__`` calls and helpers are lambda
parameters, so no ``json``/``os``/``f`` leaks into the namespace (or through ``import *``),
and ``sys.path`` is never touched. The file is found next to the module's own ``__file__``
and read through the module's loader (``__spec__.loader.get_data``), which works for zip
imports too; when a module runs without a spec (``python path/to/mod.py``, ``exec`` with a
``__file__``) it falls back to reading the file directly. JSON keeps exact types: ints and
floats are distinct JSON numbers (``1`` vs ``1.0``; floats round-trip through ``repr``,
``-0.0`` included), booleans are ``true``/``false``, and strings are escaped losslessly.
"""

from __future__ import annotations

import json
import random

import libcst as cst

from repoanchor.perturb.transform_checks import is_docstring

_TEMPLATES = (
    """{name} = __import__("json").loads(
    (
        getattr(getattr(globals().get("__spec__"), "loader", None), "get_data", None)
        or (lambda path: __import__("pathlib").Path(path).read_bytes())
    )(__import__("os").path.join(__import__("os").path.dirname(__file__), "{file}"))
)
""",
    """{name} = (lambda {json}, {path}, {loader}: {json}.loads(
    {loader}.get_data({path}) if hasattr({loader}, "get_data") else __import__("pathlib").Path({path}).read_bytes()
))(
    __import__("json"),
    __import__("os").path.join(__import__("os").path.dirname(__file__), "{file}"),
    getattr(globals().get("__spec__"), "loader", None),
)
""",
)
_LAMBDA_PARAMS = (("json", "path", "loader"), ("codec", "location", "reader"), ("parser", "where", "source"))
LOADER_MODULES = ("json", "os", "pathlib")
"""The modules the loader imports by absolute name: a project's own top-level module of one of these names would be
imported instead of the standard library's (the standard library's own `json` package loading its constants would
import itself, half initialised)."""


def insertion_index(module: cst.Module) -> int:
    """Body index just after the docstring and the ``from __future__`` imports."""
    index = 1 if module.body and is_docstring(module.body[0]) else 0
    while index < len(module.body) and _is_future_import(module.body[index]):
        index += 1
    return index


def _is_future_import(stmt: cst.BaseStatement) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    return any(
        isinstance(small, cst.ImportFrom)
        and isinstance(small.module, cst.Name)
        and small.module.value == "__future__"
        and not small.relative
        for small in stmt.body
    )


def loader_statement(rng: random.Random, name: str, filename: str) -> cst.BaseStatement:
    template = rng.choice(_TEMPLATES)
    json_name, path_name, loader_name = rng.choice(_LAMBDA_PARAMS)
    code = template.format(name=name, file=filename, json=json_name, path=path_name, loader=loader_name)
    return cst.parse_statement(code)


def insert_loader(module: cst.Module, stmt: cst.BaseStatement, index: int) -> cst.Module:
    """Insert `stmt` at body `index`, separated by blank lines from what surrounds it."""
    body = list(module.body)
    if index > 0:
        stmt = stmt.with_changes(leading_lines=[cst.EmptyLine()])
    if index < len(body) and not body[index].leading_lines:
        blank = 2 if isinstance(body[index], (cst.FunctionDef, cst.ClassDef)) else 1  # as PEP 8 spaces them
        body[index] = body[index].with_changes(leading_lines=[cst.EmptyLine()] * blank)
    body.insert(index, stmt)
    return module.with_changes(body=body)


def subscript(name: str, key: str, original: cst.BaseExpression, glued: bool) -> cst.Subscript:
    """``name["key"]`` carrying the literal's own parentheses; `glued` adds a pair where the
    literal touched a keyword (``return"x"``, ``not-1``), which a name may not touch."""
    lpar, rpar = list(original.lpar), list(original.rpar)
    if glued and not lpar:
        lpar, rpar = [cst.LeftParen()], [cst.RightParen()]
    index = cst.Index(cst.SimpleString(json.dumps(key)))
    return cst.Subscript(cst.Name(name), [cst.SubscriptElement(index)], lpar=lpar, rpar=rpar)


def encode_resource(data: dict[str, object]) -> bytes:
    """Deterministic JSON: sorted keys (no module's keys stand out as a block), UTF-8 when it can be."""
    try:
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: only \\u escapes carry them
        return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=True, allow_nan=False) + "\n").encode()


def decode_resource(raw: bytes) -> dict[str, object]:
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("resource is not a JSON object")
    return data
