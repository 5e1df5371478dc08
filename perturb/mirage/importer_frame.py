"""Whether a module's top-level code reads the frame that imported it (refusal ``importer-frame``).

A masked module's code runs from the forwarder's helper function, so the frame above its top level is the
forwarder's, not the import system's; a module first imported through a proxy chain has the chain's last module for
its importer (proxy-imports refuses such an import statement: `proxy/frame_targets.py`). Code run at import that
looks one frame up sees the difference: ``warnings.warn(..., stacklevel=2)`` names the forwarder's file and module
instead of the importer's (jsonschema 4.26's ``cli.py`` deprecation: ``python -m jsonschema`` no longer showed it, as
the default filters show DeprecationWarnings only where ``__main__`` is blamed, and a test comparing the warning's
filename failed).

Top-level code is the module's statements, class bodies included, but not function and lambda bodies, which
run when called (and not decorators: a factory's ``stacklevel`` serves the calls it decorates). What counts:
a ``stacklevel`` keyword other than 1 (warnings, logging, any helper passing it on), ``warn(msg, category, n)``
with n other than 1, ``sys._getframe(n)`` with n other than 0, ``.f_back``, and the stack readers of
`inspect` and `traceback`. A helper called at import that reads frames itself is not seen (accepted risk).
"""

from __future__ import annotations

import ast
from collections import deque

from repoanchor.perturb.source.sourcefile import called_name, parsed_quietly

HINTS = ("stacklevel", "warn(", "_getframe", "f_back", "stack(", "getouterframes")
"""Bytes every finding's source holds: a module without any is not parsed."""
STACK_OWNERS = frozenset({"inspect", "traceback"})
STACK_READERS = frozenset({"stack", "getouterframes", "extract_stack", "format_stack", "print_stack", "walk_stack"})
"""Read through `inspect.` or `traceback.`; imported bare, all but ``stack`` (``numpy.stack`` builds arrays)."""
_DEFERRED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def importer_frame_read(text: str) -> str | None:
    """What in `text`'s top-level code reads its importer's frame ("`<code>` on line N"), or None."""
    if not any(hint in text for hint in HINTS):
        return None
    if (tree := parsed_quietly(text)) is None:
        return None  # the masking transform's own compile check names the problem
    for node in _top_level_nodes(tree):
        if _reads_frame(node):
            return f"`{_excerpt(node)}` on line {node.lineno}"
    return None


def _top_level_nodes(tree: ast.Module):
    pending = deque(tree.body)
    while pending:
        node = pending.popleft()
        yield node
        if isinstance(node, _DEFERRED):
            pending.extend(_import_time_parts(node))
        elif isinstance(node, ast.ClassDef):
            pending.extend([*node.bases, *node.keywords, *node.body])
        else:
            pending.extend(ast.iter_child_nodes(node))


def _import_time_parts(node: ast.AST):
    """The parts of a def or lambda evaluated when it is defined: defaults and annotations (not decorators)."""
    arguments = node.args
    yield from (default for default in arguments.defaults + arguments.kw_defaults if default is not None)
    if not isinstance(node, ast.Lambda):
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [arguments.vararg, arguments.kwarg]
        yield from (arg.annotation for arg in every if arg is not None and arg.annotation is not None)
        if node.returns is not None:
            yield node.returns


def _reads_frame(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "f_back":
        return True
    if not isinstance(node, ast.Call):
        return False
    name = called_name(node)
    if any(keyword.arg == "stacklevel" and not _is_constant(keyword.value, 1) for keyword in node.keywords):
        return True
    if name == "warn" and len(node.args) >= 3 and not _is_constant(node.args[2], 1):
        return True
    if name == "_getframe":
        return bool(node.args) and not _is_constant(node.args[0], 0)
    if isinstance(node.func, ast.Attribute):
        return name in STACK_READERS and getattr(node.func.value, "id", "") in STACK_OWNERS
    return name in STACK_READERS - {"stack"}


def _is_constant(node: ast.AST, value: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def _excerpt(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 80 else text[:77] + "..."
