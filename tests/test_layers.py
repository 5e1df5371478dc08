"""The folder map is the architecture: no module imports one that imports it back (directly or round a
circle), packages import only the layers below them (DESIGN.md: prompts -> scaffolds -> anchor; perturb
stands alone; evals on top), and evals' own rooms stack in order. Imports inside functions count: hiding
an edge in a function does not remove it. No folder grows past ~15 modules."""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prompts", "scaffolds", "anchor", "perturb", "evals")
ALLOWED = {
    "prompts": set(),
    "scaffolds": {"prompts"},
    "anchor": {"prompts", "scaffolds"},
    "perturb": set(),
    "evals": {"prompts", "scaffolds", "anchor", "perturb"},
}
# Inside evals, rooms stack the same way: the harness (datasets, tasks, environments, grading), the
# environment images built for it, suites built on it, the named protocols (presets) that configure suites
# and runs, runs (matrix, executors, grading of finished runs), analysis over their records, the ecosystem's
# formats (interop), then the demo and the one command line on top.
EVALS_LAYERS = ("harness", "images", "suites", "presets", "runs", "analysis", "interop", "demo", "cli")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["repoanchor", *parts])


def imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """Every repoanchor module `path` imports, at any depth of its code except `if TYPE_CHECKING:` blocks
    (annotations only). `from package import module` is an edge to the module, not to the package."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            submodules = {f"{base}.{alias.name}" for alias in node.names} & modules
            found |= submodules or {base}
    return {m for m in found if m in modules and m != name}


def _runtime_nodes(tree: ast.AST):
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                todo.extend(child.orelse)
                continue
            todo.append(child)


def parse_graph() -> dict[str, set[str]]:
    files = [p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "fixture" not in p.parts]
    modules = {module_name(p): p for p in files}
    return {name: imports(path, name, set(modules)) for name, path in modules.items()}


@functools.cache
def graph() -> dict[str, set[str]]:
    """The import graph, parsed in a fresh interpreter: in a test worker whose earlier tests recursed deeply,
    CPython 3.11's AST constructor can raise a spurious SystemError ("recursion depth mismatch")."""
    found = subprocess.run([sys.executable, __file__], capture_output=True, text=True, check=True, timeout=300)
    return {name: set(targets) for name, targets in json.loads(found.stdout).items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two or more modules (Tarjan)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def package_of(module: str) -> str:
    return module.split(".")[1]


def test_no_two_modules_import_each_other():
    # A package's __init__ re-exporting its own modules is not a circle of concepts: those edges are left out.
    edges = {m: {n for n in targets if n.rpartition(".")[0] != m} for m, targets in graph().items()}
    assert cycles(edges) == []


def test_packages_import_only_the_layers_below():
    upward = defaultdict(set)
    for module, targets in graph().items():
        for target in targets:
            edge = (package_of(module), package_of(target))
            if edge[0] != edge[1] and edge[1] not in ALLOWED[edge[0]]:
                upward[edge].add(f"{module} -> {target}")
    assert not upward, {e: sorted(v) for e, v in upward.items()}


def test_evals_rooms_import_only_the_rooms_below():
    def room(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if parts[1] == "evals" and len(parts) > 3 else None

    upward = set()
    for module, targets in graph().items():
        for target in targets:
            here, there = room(module), room(target)
            if here and there and EVALS_LAYERS.index(there) > EVALS_LAYERS.index(here):
                upward.add(f"{module} -> {target}")
    assert not upward, sorted(upward)


def test_no_folder_holds_more_than_about_fifteen_modules():
    crowded = {}
    for package in PACKAGES:
        for folder in [ROOT / package, *(p for p in (ROOT / package).rglob("*") if p.is_dir())]:
            modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
            if "fixture" not in folder.parts and len(modules) > 16:
                crowded[str(folder.relative_to(ROOT))] = len(modules)
    assert not crowded, crowded


def test_the_graph_sees_imports_inside_functions():
    edges = graph()
    assert "repoanchor.evals.runs.run_one" in edges["repoanchor.evals.runs.attempt"]  # imported inside run_attempt


if __name__ == "__main__":
    print(json.dumps({name: sorted(targets) for name, targets in parse_graph().items()}))
