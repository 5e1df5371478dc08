"""What a piece of Python an agent runs does, for the step classifier: only read, or only query the environment.

Both answer from the code's syntax tree; code that does not parse gets no answer here (the caller falls back
to its patterns). "Only reads" means every call is one that opens, reads, slices, searches or prints text:
`exec(open(f).read())`, a `django.setup()` or a test call beside the read makes it code that runs (test).
"""

from __future__ import annotations

import ast
import warnings

READ_CALLS = frozenset(
    "print open read readline readlines read_text read_bytes getsource getsourcelines getsourcefile getfile"
    " parse walk iter_child_nodes dump unparse get_source_segment get_docstring getlines getline splitlines"
    " split rsplit strip rstrip lstrip startswith endswith find rfind index count join format lower upper replace"
    " enumerate range len str repr sorted reversed list dict set tuple zip min max sum any all isinstance search"
    " match fullmatch findall finditer compile group groups start end span items keys values get append extend"
    " Path abspath dirname basename exists isfile isdir listdir glob rglob iterdir encode decode dedent indent"
    " seek tell close".split()
)
"""Calls that open, read, slice, search or print text (builtins, str, re, pathlib, os.path, inspect, linecache)."""
LOCATING = frozenset({"__file__", "__path__", "executable", "prefix"})
"""Attributes that say where something is installed: printing one locates it (search)."""
SYS_PATH_EDITS = frozenset({"insert", "append"})


def _tree(code: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in the agent's code are its own business
            return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None


def parses(code: str) -> bool:
    return _tree(code) is not None


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def only_reads(code: str) -> bool:
    """True when every call in `code` only reads or prints text (see `READ_CALLS`); True too when the code does
    not parse, so that the caller's patterns decide as they did before this check."""
    tree = _tree(code)
    if tree is None:
        return True
    return all(_called(node) in READ_CALLS for node in ast.walk(tree) if isinstance(node, ast.Call))


def environment_query(code: str) -> str | None:
    """ "other" for code that only imports (and edits sys.path) and prints versions (`import django;
    print(django.__version__)`), "search" where it prints where a package lives (`__file__`); None for anything
    else: an import alone, or with fixed text only (`print('imported OK')`), checks that the code imports, a test."""
    tree = _tree(code)
    if tree is None:
        return None
    printed: list[ast.expr] = []
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        call = statement.value if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) else None
        if call is not None and _called(call) == "print" and isinstance(call.func, ast.Name):
            printed += call.args
        elif call is None or not _edits_sys_path(call):
            return None
    if not printed or not all(_queried(arg) for arg in printed) or all(_fixed(arg) for arg in printed):
        return None  # fixed text alone ("imported OK") reports whether the code imports: a test
    return "search" if any(_locating(arg) for arg in printed) else "other"


def _edits_sys_path(call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr in SYS_PATH_EDITS
        and ast.unparse(call.func.value) == "sys.path"
    )


def _queried(node: ast.expr) -> bool:
    """Fixed text, a version (an attribute or call naming one) or a location, or text made of those."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(_queried(part.value) if isinstance(part, ast.FormattedValue) else True for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _queried(node.left) and _queried(node.right)
    if isinstance(node, ast.Attribute):
        return "version" in node.attr.lower() or node.attr in LOCATING
    if isinstance(node, ast.Call):
        return "version" in _called(node).lower() or (
            _called(node) in ("str", "repr") and all(map(_queried, node.args))
        )
    return False


def _fixed(node: ast.expr) -> bool:
    return all(isinstance(part, ast.Constant) for part in ast.walk(node) if isinstance(part, ast.expr))


def _locating(node: ast.expr) -> bool:
    return any(isinstance(part, ast.Attribute) and part.attr in LOCATING for part in ast.walk(node))


def rewritten_file(code: str) -> str | None:
    """The file `code` reads and writes back (`open(p).read()` ... `open(p, 'w')`, or `read_text`/`write_text` on
    one path), as the code spells it; None when it rewrites none. A script that only writes files of its own (a
    settings module, a fixture) sets up a test; one that rewrites a file it read edits it (STEPS.md: replaces
    content)."""
    tree = _tree(code)
    if tree is None:
        return None
    read, written = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target, mode = _file_access(node)
        if target is not None:
            (written if mode is not None and set(mode) & set("wax+") else read).add(target)
    both = sorted(read & written)
    return both[0] if both else None


def _file_access(call: ast.Call) -> tuple[str | None, str | None]:
    """(the path expression, the mode) of `open(p, mode)`, `p.read_text()` (mode r) or `p.write_text()` (w)."""
    name = _called(call)
    if name == "open" and call.args:
        mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
        text = mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else "r"
        return ast.unparse(call.args[0]), text
    if name in ("read_text", "read_bytes", "write_text", "write_bytes") and isinstance(call.func, ast.Attribute):
        return ast.unparse(call.func.value), "w" if name.startswith("write") else "r"
    return None, None
