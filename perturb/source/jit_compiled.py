"""Functions a JIT compiler (numba and the like) compiles: their code must stay what it can type.

A dict global, a try/except that re-raises, an iterator driven by hand: plain Python runs them all, numba's
nopython mode rejects them, and the project's tests fail (pvlib 0.8's `spa.py`, whose every function is
decorated `@jcompile('float64(float64)', nopython=True)` after `from numba import jit` ... `jcompile = jit`).

A decorator marks a function compiled when its name (or the name it is called through) says so (`jit`,
`njit`, `numba.vectorize`, `jax.jit`, `torch.jit.script`, `tf.function`, ...), when that name is bound in the
module to such a name (imported as another name, or assigned one, as pvlib does), or when its call passes numba's
own options (`nopython=`, `nogil=`, `fastmath=`).
"""

from __future__ import annotations

import re

import libcst as cst

from repoanchor.perturb.sites import refuse_inside
from repoanchor.perturb.traversal.walk import walk

JIT_MARKERS = ("jit", "vectorize", "cfunc", "stencil")
JIT_MODULES = ("numba", "jax", "pythran", "taichi", "cython")
COMPILING = frozenset({"tf.function", "tensorflow.function", "torch.compile"})
"""Compilers whose names say nothing of it."""
NUMBA_OPTIONS = frozenset({"nopython", "nogil", "fastmath", "forceobj", "boundscheck", "error_model"})


def jit_named(name: str) -> bool:
    """Whether a dotted name reads as a JIT compiler's (`numba.njit`, `jit`, `guvectorize`, `torch.jit.script`)."""
    parts = name.lower().split(".")
    return any(marker in parts[-1] for marker in JIT_MARKERS) or "jit" in parts[:-1] or name in COMPILING


class _Aliases:
    """Module-level names bound to a JIT compiler: imported from one of JIT_MODULES, or assigned one."""

    WALK = "statements"

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.assigned: list[tuple[str, str]] = []  # (name, the dotted name it is given), in source order

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = _dotted(node.module) if node.module else ""
        if module.split(".", 1)[0] in JIT_MODULES and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname else alias.name
                if isinstance(bound, cst.Name) and jit_named(_dotted(alias.name)):
                    self.names.add(bound.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value.func if isinstance(node.value, cst.Call) else node.value
        given = _dotted(value)
        for target in node.targets:
            if isinstance(target.target, cst.Name) and given:
                self.assigned.append((target.target.value, given))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def jit_aliases(module: cst.Module) -> frozenset[str]:
    """Names the module binds to a JIT compiler, through chains of assignments (`jcompile = jit`)."""
    found = _Aliases()
    walk(found, module)
    names = set(found.names)
    changed = True
    while changed:  # a chain resolves in as many rounds as it has links
        changed = False
        for name, given in found.assigned:
            if name not in names and (given in names or jit_named(given)):
                names.add(name)
                changed = True
    return frozenset(names)


def compiled_by(func: cst.FunctionDef | cst.ClassDef, aliases: frozenset[str]) -> str | None:
    """The decorator that compiles `func` (a function, or a class: `@jitclass`) as written (`jcompile`), or None."""
    for decorator in func.decorators:
        call = decorator.decorator if isinstance(decorator.decorator, cst.Call) else None
        name = _dotted(call.func if call else decorator.decorator)
        if name and (name in aliases or jit_named(name)):
            return name
        if call and any(arg.keyword and arg.keyword.value in NUMBA_OPTIONS for arg in call.args):
            return name or "a decorator with numba's options"
    return None


def _dotted(node: cst.CSTNode | None) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else ""
    return ""


MAY_COMPILE = re.compile(r"jit|vectorize|cfunc|stencil|nopython|nogil|fastmath")
"""Text every file with a compiled function holds: most files are ruled out without a walk."""


class _Compiled:
    WALK = "statements"

    def __init__(self, aliases: frozenset[str]) -> None:
        self.aliases = aliases
        self.found: dict[int, tuple[str, str]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef | cst.ClassDef) -> bool:
        decorator = compiled_by(node, self.aliases)
        if decorator:
            self.found[id(node)] = (node.name.value, decorator)
            return False  # its nested functions are compiled with it
        return True

    visit_ClassDef = visit_FunctionDef  # numba's @jitclass compiles every method


def compiled_functions(module: cst.Module, text: str) -> dict[int, tuple[str, str]]:
    """id(function) -> (its name, the decorator that compiles it), for every compiled function of `module`
    (`text`: its source)."""
    if not MAY_COMPILE.search(text):
        return {}
    finder = _Compiled(jit_aliases(module))
    walk(finder, module)
    return finder.found


def refuse_in_compiled(sites: list, module: cst.Module, text: str, ctx) -> list:
    """`sites` less those inside a compiled function, each refused with `ctx.skip`."""
    why = {
        key: f"jit-compiled: {name} is compiled by @{decorator}, which types only a subset of Python"
        for key, (name, decorator) in compiled_functions(module, text).items()
    }
    return refuse_inside(sites, module, why, ctx)
