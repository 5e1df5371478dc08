"""Runtime facts about a worktree, gathered in a fresh interpreter: the Extend validators' eyes.

Run as a script by the project's own Python (``python -I -B probe.py SPEC OUT``), so it uses
the standard library only and never imports repoanchor. SPEC (JSON) says what to look at; OUT
receives what was found. The probe judges nothing: the family modules compare its facts with
the ground truth. Project code may print, so results go to a file, never to stdout.

- ``proxy``: every chain's entry import, executed as the entry module would run it, next to
  the original statement; the definition identity of each name; the project files each name
  comes from; which chain modules got loaded; and, for each erased file, a counterfactual: the
  next module of its chain is replaced by a stub holding sentinels and the erased module is reloaded. A file that routes
  through the chain must now hand out the sentinels; a shortcut hands out the real object.
- ``runtime``: every function and class in a public module, with the files its code lives in,
  whether that code runs in the module's own globals, its ``__module__`` and ``__qualname__``.
- ``constants``: each loader binding's value for a key, with its exact type.
"""

import functools
import importlib
import json
import os
import pathlib
import re
import sys
import traceback
import types

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
"""A uuid in a repr is drawn anew by each process (dask's ``SerializableLock`` shows its token): masked."""
ROOTS = []
"""The worktree's spellings (as given, and real), longest first: a value holding the worktree's path (a config
file found from the working directory, a BASE_DIR) reads `<root>`, so that the build's checkout and a later
one agree on it (`main` sets them)."""


@functools.lru_cache(maxsize=None)  # noqa: UP033 - the variant's Python may be 3.6, before functools.cache
def rel(path, root):
    if not path:
        return None
    real = os.path.realpath(path)
    return os.path.relpath(real, root).replace(os.sep, "/") if real.startswith(root + os.sep) else "<external>"


def is_a(obj, classes):
    """isinstance by the object's real type: isinstance asks `obj.__class__`, which a lazy proxy (Django's
    `settings`, a `SimpleLazyObject`) answers by evaluating itself, and that fails where nothing is set up."""
    return issubclass(type(obj), classes)


def innermost(function):
    """`function` unwrapped while what it wraps is a Python function: `functools.wraps` may wrap a builtin
    or a C slot (`object.__init__`), which has no code in any file, and wrappers can form a loop."""
    seen = set()
    while isinstance(getattr(function, "__wrapped__", None), types.FunctionType) and id(function) not in seen:
        seen.add(id(function))
        function = function.__wrapped__
    return function


def functions_of(obj):
    """The plain functions whose code makes up `obj` (a function, or a class's methods). Builtins, C
    types and descriptors contribute none: their code is not in a file of the project."""
    if is_a(obj, types.FunctionType):
        return [innermost(obj)]
    found = []
    for member in list(vars(obj).values()) if is_a(obj, type) else ():
        for candidate in (member, getattr(member, "__func__", None), getattr(member, "fget", None)):
            if is_a(candidate, types.FunctionType):
                found.append(innermost(candidate))
    return found


def code_files(functions, root):
    return sorted({rel(getattr(getattr(f, "__code__", None), "co_filename", None), root) for f in functions} - {None})


def identity(obj, root):
    """What the object *is*, comparable across processes: a definition, a module, or a value."""
    if is_a(obj, types.ModuleType):
        return {"kind": "module", "name": obj.__name__, "file": rel(getattr(obj, "__file__", None), root)}
    if is_a(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        files = code_files(functions_of(obj), root)
        module = getattr(obj, "__module__", None)
        if not files and module in sys.modules:
            files = [rel(getattr(sys.modules[module], "__file__", None), root)]
        qualname = getattr(obj, "__qualname__", getattr(obj, "__name__", None))
        return {"kind": "definition", "module": module, "qualname": qualname, "files": files}
    text = canonical(obj)
    for spelling in ROOTS:
        text = text.replace(spelling, "<root>")
    return {"kind": "value", "type": f"{type(obj).__module__}.{type(obj).__qualname__}", "repr": text[:300]}


def origins(obj, found, holders):
    """The project files that define `obj` (its `identity`, `found`) or whose module globals hold it itself
    (`holders`): where a forwarded name really comes from, re-exports followed (`from pkg import __version__`
    binds the very string a generated `_version.py` made)."""
    files = set(found.get("files", [])) | {found.get("file")} | holders.get(id(obj), set())
    return sorted(files - {None, "<external>"})


def holders_of(root):
    """id(value) -> the project files whose module globals hold that value, over every module loaded now: one
    pass over sys.modules, not one per forwarded name (SymPy's 1,874 chains against its 1,000 modules timed out)."""
    held = {}
    for module in list(sys.modules.values()):
        path = rel(getattr(module, "__file__", None), root)
        if not path or path == "<external>":
            continue
        try:
            values = list(vars(module).values())
        except TypeError:  # a stand-in without a __dict__ in sys.modules holds no globals to look at
            continue
        for value in values:
            held.setdefault(id(value), set()).add(path)
    return held


COMMIT = []
"""The worktree's HEAD commit as a pattern of its abbreviations: a value holding it (Sphinx's `__display_version__`,
'4.2.0+/c1bee63', asks git at import) reads `<commit>`, as the build's checkout and a task's own one-commit
repository have different commits (`main` sets it)."""


def head_commit(root):
    """The full hash of `root`'s checked-out commit, read from `.git` (no git needed), or None."""
    git = pathlib.Path(root) / ".git"
    try:
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head
        ref = head[len("ref: ") :]
        if (git / ref).is_file():
            return (git / ref).read_text(encoding="utf-8").strip()
        for line in (git / "packed-refs").read_text(encoding="utf-8").splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        return None
    return None


def masked(text):
    text = UUID.sub("<uuid>", ADDRESS.sub(" at 0x?", text))
    return COMMIT[0].sub("<commit>", text) if COMMIT else text


def canonical(obj, depth=0):
    """repr that is stable across processes: set elements sorted (their order follows the hash
    seed) and memory addresses masked (a default repr shows one)."""
    if depth > 4:
        return masked(repr(obj))
    if is_a(obj, (set, frozenset)):
        return f"{type(obj).__name__}({{{', '.join(sorted(canonical(e, depth + 1) for e in obj))}}})"
    if type(obj) in (list, tuple):
        return f"{type(obj).__name__}({', '.join(canonical(e, depth + 1) for e in obj)})"
    if type(obj) is dict:
        items = ", ".join(f"{canonical(k, depth + 1)}: {canonical(v, depth + 1)}" for k, v in obj.items())
        return f"dict({{{items}}})"
    return masked(repr(obj))


def error():
    return traceback.format_exc(limit=6)[-1500:]


def forgetting_failure(action, *args):
    """`action(*args)`; if it raises, the modules it added whose package is gone are dropped too.

    Python drops only the module whose import failed: the submodules it had imported stay, and a later
    `from pkg.sub import x` then finds `pkg.sub` loaded without its package (Django's `gis.gdal.envelope` once
    `gis.gdal` failed for want of GDAL). One probe's findings must not depend on what failed before it. Modules
    that imported completely stay (SymPy itself, loaded on the way to a failing optional subpackage): dropping
    them would re-import the whole package for every failing chain."""
    before = set(sys.modules)
    try:
        return action(*args)
    except BaseException:
        for name in sorted(set(sys.modules) - before):
            parts = name.split(".")
            if any(".".join(parts[:i]) not in sys.modules for i in range(1, len(parts))):
                sys.modules.pop(name, None)
        raise


def run_statement(statement, module, package):
    return forgetting_failure(_run_statement, statement, module, package)


def _run_statement(statement, module, package):
    if package:
        importlib.import_module(package)  # a relative import needs its package loaded first
    namespace = {"__name__": module, "__package__": package, "__builtins__": __builtins__}
    exec(compile(statement, f"<{module}>", "exec"), namespace)
    return namespace


def probe_proxy(spec, root):
    chains, forwarded = [], []
    for chain in spec["chains"]:
        entry = {"id": chain["id"], "error": None, "unavailable": None, "identities": {}, "same_object": {}}
        entry["origins"] = {}
        try:
            expected = run_statement(chain["imported"], chain["entry"], chain["package"])
        except BaseException:  # the original import itself fails here: an optional or platform-only dependency
            entry["unavailable"] = error()
            chains.append(entry)
            continue
        try:
            actual = run_statement(f"from {chain['head']} import {', '.join(chain['names'])}", chain["entry"], "")
            entry["same_object"] = {name: actual[name] is expected[name] for name in chain["names"]}
        except BaseException:
            entry["error"] = error()
            chains.append(entry)
            continue
        try:
            for name in chain["names"]:
                entry["identities"][name] = identity(actual[name], root)
                forwarded.append((entry, name, actual[name]))
        except BaseException:  # the chain works; what it forwards cannot be described here to compare it later
            entry["unavailable"] = f"what it forwards cannot be described: {error()}"
        chains.append(entry)
    holders = holders_of(root)  # once every chain ran: the modules any of them loaded hold their objects too
    for entry, name, obj in forwarded:
        entry["origins"][name] = origins(obj, entry["identities"][name], holders)
    wanted = {m for chain in spec["chains"] for m in chain["modules"]}
    loaded = {m: m in sys.modules for m in sorted(wanted)}
    routes = [route(item) for item in spec.get("erased", [])]
    return {"chains": chains, "loaded": loaded, "routes": routes}


class Sentinel:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<sentinel {self.name}>"


def route(item):
    """Does `module` take `names` from `next`? Swap `next` for a stub of sentinels and look."""
    result = {"module": item["module"], "error": None, "routed": {}}
    parent_name, _, leaf = item["next"].rpartition(".")
    stub = types.ModuleType(item["next"])
    sentinels = {name: Sentinel(name) for name in item["names"]}
    stub.__dict__.update(sentinels)
    saved = sys.modules.get(item["next"])
    parent = sys.modules.get(parent_name) if parent_name else None
    saved_attr = getattr(parent, leaf, None) if parent is not None else None
    sys.modules[item["next"]] = stub
    if parent is not None:
        setattr(parent, leaf, stub)
    try:
        module = sys.modules.get(item["module"]) or importlib.import_module(item["module"])
        module = importlib.reload(module)
        for name in item["names"]:
            result["routed"][name] = getattr(module, name) is sentinels[name]
    except BaseException:
        result["error"] = error()
    finally:
        if saved is None:
            sys.modules.pop(item["next"], None)
        else:
            sys.modules[item["next"]] = saved
        if parent is not None:
            setattr(parent, leaf, saved_attr)
    return result


def probe_runtime(spec, root):
    found = []
    for target in spec["targets"]:
        entry = {"module": target["module"], "error": None, "definitions": []}
        try:
            module = forgetting_failure(importlib.import_module, target["module"])
            for name, value in list(vars(module).items()):
                if is_a(value, (type, types.FunctionType)):
                    functions = functions_of(value)
                    entry["definitions"].append(
                        {
                            "name": name,
                            "kind": "class" if is_a(value, type) else "function",
                            "module": getattr(value, "__module__", None),
                            "qualname": value.__qualname__,
                            "files": code_files(functions, root),
                            "module_globals": all(f.__globals__ is vars(module) for f in functions),
                        }
                    )
        except BaseException:
            entry["error"] = error()
        found.append(entry)
    return found


def probe_constants(spec):
    found = []
    for item in spec["entries"]:
        entry = {"module": item["module"], "binding": item["binding"], "key": item["key"], "error": None}
        entry["stage"] = "import"  # an import that fails (a script that downloads, a platform-only module) vs a lookup
        try:
            module = forgetting_failure(importlib.import_module, item["module"])
            entry["stage"] = "value"
            value = getattr(module, item["binding"])[item["key"]]
            entry.update(type=type(value).__name__, repr=repr(value), stage="done")
        except BaseException:
            entry["error"] = error()
        found.append(entry)
    return found


def main(spec_path, out_path):
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    root = os.path.realpath(spec["root"])
    ROOTS[:] = sorted({root, spec["root"]}, key=len, reverse=True)  # the caller gives an absolute path
    commit = head_commit(root)
    if commit and re.fullmatch(r"[0-9a-f]{40}", commit):
        COMMIT[:] = [re.compile(r"\b" + commit[:7] + "[0-9a-f]{0,33}\\b")]
    sys.path[:0] = spec["sys_path"]
    os.chdir(root)
    result = {}
    if "constants" in spec:
        result["constants"] = probe_constants(spec["constants"])
    if "runtime" in spec:
        result["runtime"] = probe_runtime(spec["runtime"], root)
    if "proxy" in spec:  # last: its counterfactuals swap modules in and out
        result["proxy"] = probe_proxy(spec["proxy"], root)
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
