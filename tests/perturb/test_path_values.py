"""Folders a module's listing calls list, paths followed through names and imports (perturb/mirage/path_values.py)."""

from __future__ import annotations

import ast

import pytest
from support.trees import make_tree

from repoanchor.perturb.mirage.path_values import PathValues

# astroid 2.13: const.py builds the path, __init__.py lists it and imports each module.
CONST = "from pathlib import Path\n\nHOME = Path(__file__).parent\nBRAIN = HOME / 'brain'\n"
LOADS = "from importlib import import_module\n\n\ndef load(name):\n    return import_module(name)\n\n\n"
ITERATES = "for module in BRAIN.iterdir():\n    import_module('a.brain.' + module.stem)\n"


@pytest.mark.parametrize(
    ("loader", "listed"),
    [
        (LOADS + "from a.const import BRAIN\n" + ITERATES, {"a/brain": False}),
        (LOADS + "from .const import BRAIN as B\n" + ITERATES.replace("BRAIN", "B"), {"a/brain": False}),
        (LOADS + "from a import const\n" + ITERATES.replace("BRAIN", "const.BRAIN"), {}),  # attribute: not followed
        # function-local names, os.path, a glob of modules, a walk
        (
            "import os, importlib\n\ndef load():\n    here = os.path.dirname(__file__)\n"
            "    for n in os.listdir(os.path.join(here, 'plugins')):\n        importlib.import_module(n)\n",
            {"a/plugins": False},
        ),
        (
            LOADS + "from pathlib import Path\nR = Path(__file__).parents[1] / 'rules'\nX = R.glob('L*.py')\n",
            {"rules": False},
        ),
        (
            LOADS + "import glob, os\nX = glob.glob(os.path.join(os.path.dirname(__file__), 'ext', '*.py'))\n",
            {"a/ext": False},
        ),
        (LOADS + "import os\nfor d in os.walk(os.path.dirname(os.path.abspath(__file__))):\n    pass\n", {"a": True}),
        (LOADS + "from pathlib import Path\nX = (Path(__file__).parent / 'sub').rglob('*.py')\n", {"a/sub": True}),
        # sympy 1.13.3's test_args.py: `os.path.split(__file__)[0]`, then up with `os.pardir`, walked
        (
            "import os\nthis = os.path.split(__file__)[0]\ntop = os.path.abspath(os.path.join(this, os.pardir, 'a'))\n"
            "for root, dirs, files in os.walk(top):\n    __import__(files[0])\n",
            {"a": True},
        ),
        (
            LOADS + "from os import curdir, listdir, path\nX = listdir(path.join(path.split(__file__)[0], curdir))\n",
            {"a": False},
        ),
        (LOADS + "import os\nX = os.listdir(os.path.split(__file__)[1])\n", {}),  # the file's name: no folder
        (
            "import pkgutil, os\nM = pkgutil.iter_modules([os.path.join(os.path.dirname(__file__), 'ext')])\n",
            {"a/ext": False},
        ),
        # a package's __path__, held in a name first (pyupgrade's `_data.py`), through an import or an alias
        (
            "import pkgutil\nfrom a import brain\n\n\ndef load():\n    path = brain.__path__\n"
            "    return list(pkgutil.walk_packages(path, 'a.brain.'))\n",
            {"a/brain": True},
        ),
        ("import pkgutil\nimport a.brain as b\nM = pkgutil.iter_modules(b.__path__)\n", {"a/brain": False}),
        ("import pkgutil, a.brain\nM = pkgutil.iter_modules(a.brain.__path__)\n", {"a/brain": False}),
        (LOADS + "import os\nfrom . import brain\nX = os.listdir(brain.__path__[0])\n", {"a/brain": False}),
        ("import pkgutil\nfrom a import const\nM = pkgutil.iter_modules(const.__path__)\n", {}),  # no package
        # not listings of modules: other files, a folder outside the tree, a working-folder path, no import by name
        (LOADS + "import glob, os\nX = glob.glob(os.path.join(os.path.dirname(__file__), '*.json'))\n", {}),
        (LOADS + "from pathlib import Path\nX = (Path(__file__).parents[3] / 'x').iterdir()\n", {}),
        (LOADS + "import os\nX = os.listdir('plugins')\n", {}),
        ("import os\nfor root, _, names in os.walk(os.path.dirname(__file__)):\n    pass\n", {}),
    ],
)
def test_the_folders_a_loader_lists(tmp_path, loader, listed):
    files = {"a/__init__.py": "", "a/const.py": CONST, "a/loader.py": loader, "a/brain/__init__.py": ""}
    root = make_tree(tmp_path, files)
    packages = {"a", "a/brain"}
    values = PathValues(root, sorted(files), packages)
    assert values.listed("a/loader.py", ast.parse(loader)) == listed


def test_a_path_built_in_a_module_that_does_not_use_file_is_not_followed(tmp_path):
    """A re-export (`__init__` passing on const's path) is not read: only modules naming `__file__` are."""
    files = {
        "a/__init__.py": "from a.const import BRAIN\n",
        "a/const.py": CONST,
        "a/loader.py": LOADS + "from a import BRAIN\n" + ITERATES,
    }
    root = make_tree(tmp_path, files)
    values = PathValues(root, sorted(files), {"a"})
    assert values.listed("a/loader.py", ast.parse(files["a/loader.py"])) == {}


def test_a_listing_of_the_trees_root_is_found(tmp_path):
    """A top-level loader listing the modules beside it lists the tree's root folder, ""."""
    loader = LOADS + "import glob, os\nFOUND = glob.glob(os.path.join(os.path.dirname(__file__), '*.py'))\n"
    files = {"a/__init__.py": "", "loader.py": loader}
    values = PathValues(make_tree(tmp_path, files), sorted(files), {"a"})
    assert values.listed("loader.py", ast.parse(loader)) == {"": False}
