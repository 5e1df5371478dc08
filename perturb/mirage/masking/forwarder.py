"""The forwarding ``pkg/mod.py`` that runs a hidden implementation as ``pkg.mod`` itself.

How it works (and why each step is there):

- It executes the hidden file *in the forwarder's own module object*, the one the import system
  registered in ``sys.modules["pkg.mod"]`` before running the forwarder. So the module is in
  ``sys.modules`` under its public name before a line of the implementation runs (circular
  imports see the partial module, as before), and ``importlib.reload(pkg.mod)`` re-executes the
  forwarder in that same object, which re-executes the implementation in place, as reload does
  for a plain module (a fresh module object would leave the caller's reference stale).
- The name is ``__spec__.name``, not ``__name__``: under ``python -m pkg.mod`` (or
  ``runpy.run_module``) the forwarder runs as ``__main__`` with the spec of ``pkg.mod``, so the
  implementation gets ``__name__ == "__main__"`` (its main guard fires) and ``__package__ ==
  "pkg"`` (its relative imports resolve), exactly as the plain module did.
- Run by path (``python pkg/mod.py``, ``runpy.run_path``) the forwarder has no spec, as the plain module had
  none: the hidden file's code then runs in its namespace as that script, ``__file__`` the hidden file's, compiled
  from its bytes (``open`` and ``compile`` are builtins: still no import). A test that runs a module by a path it
  builds (``os.path.join("pkg", "mod.py")``) names no ``pkg/mod.py`` that `eligibility` could find.
- Its spec is built like ``importlib.util.spec_from_file_location(name, hidden)`` but from
  the forwarder's own ``type(__spec__)`` and ``type(__loader__)``: an ``import`` statement in the
  forwarder would run ``builtins.__import__`` under the module's name, which import-tracking tests
  observe (click's ``test_light_imports`` allows a fixed set of stdlib imports only).
- A loader bound to one file (the import system's, with a ``path``) gets a twin for the hidden
  file. A loader that reads the spec's origin instead (pytest's assertion rewriter, which loads
  plugins, conftests and test modules; its constructor takes a config) loads the hidden file itself,
  so its asserts are rewritten as the original's were. It needs the module object, which an
  import-free forwarder reaches through the ``sys`` that ``ModuleSpec``'s own module holds
  (pytest-5840: ``type(__loader__)(name, path)`` raised TypeError importing ``_pytest.pytester``).
- ``__spec__``, ``__loader__``, ``__file__``, ``__cached__`` and ``__package__`` become those of
  the hidden file, so ``__file__``-relative reads resolve in the same folder,
  ``inspect.getsourcefile``, ``inspect.getsource`` and tracebacks show the real code.
  ``_initializing`` is set while the body runs, as the import system does for the spec it
  loads, so another thread importing ``pkg.mod`` meanwhile waits instead of seeing a half module.
- The helper deletes its own name before the body runs, and the forwarder has no docstring (a
  module without one must keep ``__doc__ = None``), so the namespace holds nothing but what the
  implementation defines: the same keys, in the same order, as the original module's.
- The hidden path is ``__file__`` minus ``"<stem>.py"``: string slicing, so no ``os`` import.

Every identifier and the wording of the header comment are drawn from the seed.
"""

from __future__ import annotations

import random

from repoanchor.perturb.mirage.masking.names import function_name, local_name

HEADERS = (
    (
        "Public import path of this module. Its code is kept in a sibling file and executed",
        "here, as this very module, so names, pickles and patch targets stay the same.",
    ),
    (
        "Entry point that keeps this module's import path stable: the module body lives in",
        "a sibling file and runs in this module's namespace.",
    ),
    (
        "Compatibility layer: the implementation is loaded from a file in this folder into",
        "this module object (same name, same globals), so existing imports keep working.",
    ),
    (
        "This file only binds the implementation to the public module name; the code itself",
        "lives in a sibling module.",
    ),
)

TEMPLATE = """\
# {header0}
# {header1}


def {fn}({name}, {path}):
    {ns} = globals()
    del {ns}["{fn}"]
    if {name} is None:
        {ns}["__file__"] = {path}
        with open({path}, "rb") as {stream}:
            exec(compile({stream}.read(), {path}, "exec"), {ns})
        return
    {shared} = not hasattr(__loader__, "path")
    {loader} = __loader__ if {shared} else type(__loader__)({name}, {path})
    {spec} = type(__spec__)({name}, {loader}, origin={path})
    {spec}.has_location = True
    {ns}.update(
        __spec__={spec},
        __loader__={loader},
        __file__={path},
        __cached__={spec}.cached,
        __package__={spec}.parent,
    )
    {spec}._initializing = True
    try:
        if {shared}:
            {loader}.exec_module(type({spec}).__init__.__globals__["sys"].modules[{name}])
        else:
            exec({loader}.get_code({name}), {ns})
    finally:
        {spec}._initializing = False


{fn}(__spec__ and __spec__.name, __file__[: -len("{stem}.py")] + "{hidden}.py")
"""


def forwarder_source(
    rng: random.Random, stem: str, hidden: str, avoid: set[str], vocabulary: tuple[str, ...] | None = None
) -> str:
    """Source of the forwarding ``<stem>.py`` that runs ``<hidden>.py`` (same folder) as the public module.

    `avoid` holds identifiers that the drawn names must not equal (the implementation's own,
    so that no reader mistakes a forwarder name for one of the module's); drawn names join it. Their
    words are the project's `vocabulary` (mirage/vocabulary.py) where it has one.
    """
    header = rng.choice(HEADERS)
    names = {
        "fn": function_name(rng, avoid, vocabulary),
        "name": local_name(rng, "name", avoid, vocabulary),
        "path": local_name(rng, "path", avoid, vocabulary),
        "loader": local_name(rng, "loader", avoid, vocabulary),
        "spec": local_name(rng, "spec", avoid, vocabulary),
        "ns": local_name(rng, "scope", avoid, vocabulary),
        "shared": local_name(rng, "shared", avoid, vocabulary),
        "stream": local_name(rng, "stream", avoid, vocabulary),
    }
    return TEMPLATE.format(header0=header[0], header1=header[1], stem=stem, hidden=hidden, **names)
