"""The class index walks statement lists only, yet sees every class statement in `ast.walk`'s order (same-named
classes merge their bases in that order), on nested constructs and on every file of this repository."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from repoanchor.perturb.source.project import class_defs

NESTED = """
class A(Base0): pass
if x:
    class A(Base1): pass
else:
    def f(k=lambda: None):
        class A(Base2):
            class Inner(Z): pass
        return A
try:
    class T: pass
except E:
    class A(Base3): pass
else:
    class Else: pass
finally:
    class Fin: pass
for i in y:
    class ForBody: pass
else:
    class ForElse: pass
while z:
    with m() as n:
        class InWith: pass
match v:
    case 1:
        class InCase(Base4): pass
    case _:
        async def g():
            class InAsync: pass
class Outer:
    class A(Base5): pass
"""


def walked(tree: ast.AST) -> list[ast.ClassDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def test_nested_classes_in_ast_walk_order():
    tree = ast.parse(NESTED)
    found = list(class_defs(tree))
    assert found == walked(tree)
    assert len(found) == 15
    assert [c.bases[0].id for c in found if c.name == "A"] == ["Base0", "Base1", "Base5", "Base2", "Base3"]  # by depth


@pytest.mark.parametrize("package", ["perturb", "evals", "anchor", "tests"])
def test_same_classes_as_ast_walk_on_this_repository(package: str):
    root = Path(__file__).parents[2] / package
    files = sorted(root.rglob("*.py"))
    assert len(files) > 3
    for path in files:
        tree = ast.parse(path.read_bytes())
        assert list(class_defs(tree)) == walked(tree), path


def test_the_index_on_two_processes_is_the_index_of_one_pass():
    from repoanchor.perturb.source.files import python_files
    from repoanchor.perturb.source.project import class_index

    root = Path(__file__).parents[2] / "perturb"
    files = python_files(root)[0]
    assert len(files) > 50
    alone, split = class_index(root, files, workers=1), class_index(root, files, workers=2)
    assert split == alone
    members, bases, _ = alone
    assert "function" in members["_Walker"]
    assert any(len(found) > 1 for found in bases.values())  # order of several bases is compared too
