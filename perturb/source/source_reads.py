"""Modules whose whole text a test reads, named as modules: every transform that rewrites their text leaves them alone.

trio's ``test_type_stubs_match_lists`` reads ``_file_io.__spec__.loader.get_source("trio._file_io")`` and walks its
lines for ``class AsyncIOWrapper`` and then ``if TYPE_CHECKING``; double-negation wrote ``if not not TYPE_CHECKING``
and the test failed, the code running alike. A test reads a module's text where it calls ``get_source("<dotted
name>")``, ``inspect.getsource``/``getsourcelines``/``findsource``/``getsourcefile`` on a module the test file
imports (``import pkg.mod as m``, ``from pkg import mod``), or uses such a module's ``__file__`` for anything but
finding its folder or its name (``open(m.__file__)``, ``Path(m.__file__).read_text()``, or handing it on:
pycodestyle's ``test_own_dog_food`` checks the style of ``[pycodestyle.__file__, ...]`` and every rewrite of its
text broke it; ``os.path.dirname(m.__file__)``, ``Path(m.__file__).parent``, ``.name`` and comparisons are no read).
The dotted name names the tree's ``a/b.py`` or ``a/b/__init__.py`` under any folder (``src/``); an imported name that
is no module of the tree (a function, a third-party module) names nothing. Masking keeps such a module's text in its
hidden twin, where ``__file__`` and the loader lead, so it masks them still.
"""

from __future__ import annotations

import ast
import re

from repoanchor.perturb.source.sourcefile import called_name, parsed_quietly

HINT = re.compile(
    rb"get_source|getsource|findsource|\w\.__file__"
    rb"""|['"][^'"\n]*/[^'"\n]*\.py['"]|['"]\s*[/,]\s*['"][^'"\n/]*\.py['"]"""
)
"""What a test file reading a module's text holds (a module's ``__file__``, not its own; a path to a ``.py`` file
with a folder): the others are not parsed."""
_HINT_BYTES = (b"source", b".__file__", b".py'", b'.py"')
"""Bytes every match of `HINT` holds, looked for first: 10x faster than the pattern alone (sympy's 679 test files)."""
SOURCE_GETTERS = frozenset({"getsource", "getsourcelines", "findsource", "getsourcefile"})
SAME_PATH = frozenset({"abspath", "realpath", "normpath", "expanduser", "Path", "PurePath", "str", "fspath"})
"""Calls that give back the path they are given, spelled otherwise (``.resolve()``/``.absolute()`` too)."""
FOLDER_OR_NAME = frozenset({"dirname", "split", "basename", "splitext", "exists", "isfile", "isdir"})
"""Calls on a module's path that find its folder or its name, or test it, without reading it."""
PATH_PARTS = frozenset(
    {"parent", "parents", "name", "stem", "suffix", "with_name", "with_suffix", "endswith", "startswith", "exists"}
)
"""Attributes of a module's path (a `Path` or a `str`) that find its folder, its name or a sibling's."""


def sources_read(tests: dict[str, bytes], every: list[str]) -> dict[str, str]:
    """{tree-relative module: `<test file> reads it (<how>)`} over the test files (`files.read_test_files`)."""
    found: dict[str, str] = {}
    for rel, data in tests.items():
        if not (any(part in data for part in _HINT_BYTES) and HINT.search(data)):
            continue
        if (tree := parsed_quietly(data)) is None:
            continue
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for dotted, how in _reads(tree, parents):
            for module in modules_named(dotted, every):
                found.setdefault(module, f"{rel} reads it ({how})")
        for suffix, how in _spelled_paths(tree, parents):
            if any(_ends_with(test, suffix) for test in tests):
                continue  # pylint's TEST_DIRECTORY / "lint/__init__.py" is its tests' own package
            for module in (one for one in every if _ends_with(one, suffix)):
                found.setdefault(module, f"{rel} names its path ({how})")
    return found


def _ends_with(rel: str, suffix: str) -> bool:
    return rel == suffix or rel.endswith("/" + suffix)


def _spelled_paths(tree: ast.Module, parents: dict[ast.AST, ast.AST]):
    """(path suffix, how) for each path to a ``.py`` file that `tree` spells with a folder and makes, opens or holds
    in a name: ``open("pkg/mod.py")``, ``Path(__file__).parents[1] / "pkg" / "mod.py"``, ``os.path.join(HERE, "..",
    "pkg", "mod.py")``, ``MODULE = "src/pkg/mod.py"``. A bare file name (``"models.py"``) does not tell which module
    it is, and a path listed among others (sympy's runtests.py lists modules its doctests skip) is a name, not a
    read."""
    for node in ast.walk(tree):
        made = _made_or_held(node, parents.get(node))
        if made and isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".py"):
            parts = [part for text in _spelled_before(node, parents) for part in text.split("/")]
            parts = [part for part in parts + node.value.split("/") if part not in ("", ".", "..")]
            if len(parts) >= 2:
                yield "/".join(parts), _excerpt(parents[node])


def _made_or_held(node: ast.AST, user: ast.AST | None) -> bool:
    """A path made or opened (a call's argument, a `/` operand), or held in a name (``MODULE = "pkg/mod.py"``, opened
    elsewhere): not one listed among others."""
    if isinstance(user, (ast.Call, ast.BinOp)):
        return True
    return isinstance(user, (ast.Assign, ast.AnnAssign)) and user.value is node


def _spelled_before(node: ast.Constant, parents: dict[ast.AST, ast.AST]) -> list[str]:
    """The literal folders joined right before `node`: ``... / "pkg" / node`` or ``join(..., "pkg", node)``."""
    user = parents.get(node)
    if isinstance(user, ast.BinOp) and isinstance(user.op, ast.Div) and user.right is node:
        held, texts = user.left, []
        while isinstance(held, ast.BinOp) and isinstance(held.op, ast.Div) and _text(held.right) is not None:
            texts.insert(0, _text(held.right))
            held = held.left
        return [_text(held)] + texts if _text(held) is not None else texts
    if isinstance(user, ast.Call) and node in user.args:
        before = user.args[: user.args.index(node)]
        texts = [_text(arg) for arg in before]
        cut = max((i for i, text in enumerate(texts) if text is None), default=-1)
        return texts[cut + 1 :]
    return []


def _excerpt(node: ast.AST, limit: int = 100) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def modules_named(dotted: str, every: list[str]) -> list[str]:
    """The tree's files that a dotted module name may mean: ``a/b.py`` or ``a/b/__init__.py`` under any folder."""
    if not all(part.isidentifier() for part in dotted.split(".")):
        return []
    stem = dotted.replace(".", "/")
    ends = (f"{stem}.py", f"{stem}/__init__.py")
    below = tuple("/" + end for end in ends)
    return [rel for rel in every if rel in ends or rel.endswith(below)]


def _reads(tree: ast.Module, parents: dict[ast.AST, ast.AST]):
    """(dotted module name, how) for each read of a module's text in `tree` (`parents`: each node's)."""
    modules = _imported_modules(tree)
    for node in ast.walk(tree):
        if (dotted := _file_of(node, modules)) and (use := _path_use(node, parents)):
            yield dotted, f"uses {_excerpt(use)}"
        if not isinstance(node, ast.Call):
            continue
        name, first = called_name(node), node.args[0] if node.args else None
        if name == "get_source" and isinstance(first, ast.Constant) and isinstance(first.value, str):
            yield first.value, f"get_source({first.value!r})"
        elif name in SOURCE_GETTERS and first and (dotted := _module_of(first, modules)):
            yield dotted, f"{name}({ast.unparse(first)})"


def _imported_modules(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it may be a module of, from every import in `tree` (functions' included)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:  # `import a.b` binds a; `import a.b as m` binds m to a.b
                bound = alias.name if alias.asname else alias.name.partition(".")[0]
                names[alias.asname or bound] = bound
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _module_of(node: ast.AST, modules: dict[str, str]) -> str | None:
    """The dotted module name `node` (a name or attribute chain over an imported name) spells, or None."""
    if isinstance(node, ast.Name):
        return modules.get(node.id)
    if isinstance(node, ast.Attribute) and (owner := _module_of(node.value, modules)):
        return f"{owner}.{node.attr}"
    return None


def _file_of(node: ast.AST, modules: dict[str, str]) -> str | None:
    """The module whose ``__file__`` `node` is (``m.__file__``), or None."""
    if isinstance(node, ast.Attribute) and node.attr == "__file__":
        return _module_of(node.value, modules)
    return None


def _path_use(node: ast.Attribute, parents: dict[ast.AST, ast.AST]) -> ast.AST | None:
    """What takes the path ``m.__file__`` (`node`) spells, where that may read the module; None where it only finds
    its folder or name (``os.path.dirname(...)``, ``Path(...).parent``) or compares it."""
    held, user = node, parents.get(node)
    while _same_path(held, user, parents):
        held = user if isinstance(user, ast.Call) else parents[user]
        user = parents.get(held)
    if isinstance(user, ast.Compare) or user is None:
        return None
    if isinstance(user, ast.Call) and held in user.args and called_name(user) in FOLDER_OR_NAME:
        return None
    if isinstance(user, ast.Attribute) and user.attr in PATH_PARTS:
        return None
    return user


def _same_path(held: ast.AST, user: ast.AST | None, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether `user` gives back the path `held` spells: ``abspath(held)``, ``Path(held)``, ``held.resolve()``."""
    if isinstance(user, ast.Call):
        return bool(user.args) and user.args[0] is held and called_name(user) in SAME_PATH
    return (
        isinstance(user, ast.Attribute)
        and user.attr in ("resolve", "absolute")
        and isinstance(call := parents.get(user), ast.Call)
        and call.func is user
    )
