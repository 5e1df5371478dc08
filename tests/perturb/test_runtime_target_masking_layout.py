"""runtime-target-masking's decoy layout: by default the decoys sit in a folder named like the module (without
__init__.py); with `decoy_layout: siblings` (the RepoMirage code's layout) they sit beside the hidden real file,
so the real file is not the only candidate outside a decoy folder. Either way the package behaves as before."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from tests.support.masking import PACKAGE, entries, mask, run_py
from tests.support.trees import make_tree

CHECK = "import pkg.mod as m; print(m.area(3), m.data().strip(), m.__name__, m.Shape(2) == m.Shape(2))"


@pytest.mark.parametrize(("layout", "decoy_folder"), [(None, "pkg/mod"), ("siblings", "pkg")])
def test_decoys_go_where_the_layout_says(tmp_path, layout, decoy_folder):
    src = make_tree(tmp_path / "src", PACKAGE)
    out = tmp_path / "out"
    options = {"decoys": 2, **({"decoy_layout": layout} if layout else {})}
    report = mask(src, out, seed=4, **options)
    hidden = [e["runtime_path"] for e in entries(report, "wrapper_module") if e["visible_path"] == "pkg/mod.py"]
    decoys = [e["visible_path"] for e in entries(report, "decoy") if e["owner"] == "pkg/mod.py"]
    assert len(hidden) == 1
    assert len(decoys) == 2
    assert {str(PurePosixPath(d).parent) for d in decoys} == {decoy_folder}
    assert all((out / d).is_file() for d in decoys)
    assert (out / "pkg" / "mod").is_dir() is (layout is None)
    if layout == "siblings":  # beside the real file: same folder, same kind of name
        assert {str(PurePosixPath(d).parent) for d in decoys} == {str(PurePosixPath(hidden[0]).parent)}
    assert run_py(out, CHECK).stdout == run_py(src, CHECK).stdout


def test_an_unknown_layout_is_refused(tmp_path):
    src = make_tree(tmp_path / "src", PACKAGE)
    with pytest.raises(ValueError, match="'decoy_layout' must be one of"):
        mask(src, tmp_path / "out", decoy_layout="nearby")
