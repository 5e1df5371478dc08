"""`write_atomic`: the old file or the whole new one, and nothing else left behind, whatever happens."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.atomic import write_atomic


@pytest.mark.parametrize("durable", [False, True])
def test_replaces_the_file_and_leaves_no_temporary(tmp_path: Path, durable: bool):
    path = tmp_path / "deep" / "er" / "out.json"
    write_atomic(path, "first\n", durable=durable)
    write_atomic(path, "zweite ✓\n".encode(), durable=durable)
    assert path.read_text(encoding="utf-8") == "zweite ✓\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.json"]


def test_a_write_that_fails_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path):
    path = tmp_path / "out.json"
    write_atomic(path, "old")
    with pytest.raises(TypeError):
        write_atomic(path, 42)  # neither str nor bytes: the write itself fails
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
