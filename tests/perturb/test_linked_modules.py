"""A module a symlink in the tree points at is imported through the link too, as a module of the link's package:
proxy-imports (relative imports of proxies placed beside it) and constant-externalization (its JSON beside its
`__file__`) would resolve beside the link, where nothing was placed. Both refuse it, naming the link; the module
still works through either path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.source.files import link_targets
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

CORE = 'import os.path\n\nLABEL = "release"\n\n\ndef get():\n    return LABEL + os.path.sep\n'
OTHER = 'import os.path\n\nNAME = "other"\n\n\ndef name():\n    return NAME + os.path.sep\n'


def _tree(tmp_path, link_folder: bool):
    files = {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/plain.py": OTHER, "other/__init__.py": ""}
    src = make_tree(tmp_path / "src", files)
    if link_folder:
        (src / "other" / "sub").symlink_to("../pkg", target_is_directory=True)
    else:
        (src / "other" / "linked.py").symlink_to("../pkg/core.py")
    return src


@pytest.mark.parametrize("link_folder", [False, True], ids=["file-link", "folder-link"])
@pytest.mark.parametrize("transform", ["proxy-imports", "constant-externalization"])
def test_a_module_a_link_points_at_is_refused_naming_the_link(tmp_path, transform, link_folder):
    src = _tree(tmp_path, link_folder)
    link = "other/sub" if link_folder else "other/linked.py"
    assert link_targets(src) == {("pkg" if link_folder else "pkg/core.py"): link}
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], fraction=1.0, check_interpreters=False))
    refused = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped) and o.reason.startswith("symlink")}
    assert refused["pkg/core.py"].startswith(f"symlink: {link} links to it; imported through the link")
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert ("pkg/plain.py" in applied) is not link_folder  # a module no link reaches is perturbed as before
    via = "other.sub.core" if link_folder else "other.linked"
    code = f"import pkg.core, {via} as v; print(pkg.core.get(), v.get())"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "out"), "PYTHONDONTWRITEBYTECODE": "1"}
    ran = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert ran.stdout.split() == ["release/", "release/"], ran.stderr


def test_a_link_beside_its_target_reaches_the_same_folder_and_refuses_nothing(tmp_path):
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    (src / "pkg" / "alias.py").symlink_to("core.py")
    assert link_targets(src) == {}
