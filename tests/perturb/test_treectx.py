"""TreeContext transactions: what a transaction wrote is compiled at its end, and a failure undoes all of it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.treectx import TreeContext


def _ctx(root: Path) -> TreeContext:
    return TreeContext("proxy-imports", root.resolve(), random.Random(0), ProjectInfo(min_python=(3, 8)))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    return tmp_path


def test_a_transaction_that_writes_code_that_does_not_compile_is_undone(tree: Path):
    ctx = _ctx(tree)
    with ctx.transaction("pkg/mod.py"):
        ctx.write("pkg/mod.py", "from pkg._hidden import x\n")
        ctx.create("pkg/_hidden.py", "x = (1\n")  # unclosed: does not compile
        ctx.site("<module>", "x = 1", "from pkg._hidden import x")
    assert isinstance(ctx.outcomes[-1], Failed)
    assert "pkg/_hidden.py" in ctx.outcomes[-1].error
    assert (tree / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert not (tree / "pkg" / "_hidden.py").exists()


def test_what_was_written_is_compiled_under_the_oldest_grammar_too(tree: Path):
    ctx = _ctx(tree)
    with ctx.transaction("pkg/mod.py"):
        ctx.write("pkg/mod.py", "if (y := 1):\n    pass\nmatch y:\n    case 1:\n        pass\n")  # 3.10 syntax
        ctx.site("<module>", "x = 1", "match")
    assert isinstance(ctx.outcomes[-1], Failed)
    assert (tree / "pkg" / "mod.py").read_text() == "x = 1\n"


def test_a_file_created_then_removed_is_not_compiled_and_the_rest_commits(tree: Path):
    ctx = _ctx(tree)
    with ctx.transaction("pkg/mod.py"):
        ctx.create("pkg/scratch.py", "not python at all (\n")
        ctx.remove("pkg/scratch.py")
        ctx.write("pkg/mod.py", "x = 2\n")
        ctx.site("<module>", "x = 1", "x = 2")
    assert isinstance(ctx.outcomes[-1], Applied)
    assert ctx.committed == {"pkg/mod.py", "pkg/scratch.py"}
    assert (tree / "pkg" / "mod.py").read_text() == "x = 2\n"
    assert not (tree / "pkg" / "scratch.py").exists()


def test_creating_an_existing_file_or_leaving_the_tree_is_refused(tree: Path, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (tree / "pkg" / "link").symlink_to(outside, target_is_directory=True)
    ctx = _ctx(tree)
    with ctx.transaction("pkg/mod.py"):
        ctx.create("pkg/mod.py", "y = 1\n")
    assert isinstance(ctx.outcomes[-1], Failed)
    assert "already exists" in ctx.outcomes[-1].error
    with ctx.transaction("pkg/mod.py"):
        ctx.create("pkg/link/escape.py", "y = 1\n")
    assert "resolves outside the variant tree" in ctx.outcomes[-1].error
    assert not any(outside.iterdir())
    with ctx.transaction("pkg/mod.py"):
        pass
    assert isinstance(ctx.outcomes[-1], Skipped)
