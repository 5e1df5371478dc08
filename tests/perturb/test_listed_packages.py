"""A package that lists its own folder at run time (plugin discovery, as pylint's checkers) gets no new module
from proxy-imports or runtime-target-masking: a proxy or a hidden twin there would be found and run as one
more plugin (pylint refused a masked checker's second registration, and every test of pylint-dev__pylint-4970's
variant failed). The same package loading its plugins by name is perturbed as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.mirage.dotted_listing import dotted_listings
from repoanchor.perturb.mirage.listing import listed_elsewhere, lists_own_folder
from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree, run_tests

PLUGIN = """import os
import re

NAME = "{name}"


def register(registry):
    if NAME in registry:
        raise ValueError("registered twice: " + NAME)
    registry.append(NAME + ":" + re.sub("a", "A", os.sep.join(["x", "y"])))
"""
DISCOVERS = """import importlib
import os

REGISTRY = []


def load_all():
    for name in sorted(os.listdir(__path__[0])):
        stem, ext = os.path.splitext(name)
        if ext == ".py" and stem != "__init__":
            register = getattr(importlib.import_module(__name__ + "." + stem), "register", None)
            if register is not None:
                register(REGISTRY)
    return REGISTRY
"""
BY_NAME = DISCOVERS.replace("sorted(os.listdir(__path__[0]))", '["alpha.py", "beta.py"]')
EXPECTED = "['alpha:x/y', 'beta:x/y']\n"


def _tree(root: Path, init: str) -> Path:
    files = {"plugins/__init__.py": init}
    files |= {f"plugins/{name}.py": PLUGIN.format(name=name) for name in ("alpha", "beta")}
    return make_tree(root, files)


def _printed(root: Path, code: str) -> str:
    """What `code` prints run with the tree at `root` on sys.path."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True).stdout


def _loaded(root: Path) -> str:
    return _printed(root, "import plugins; print(plugins.load_all())")


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_a_package_listing_its_folder_gets_no_new_module(tmp_path, transform):
    src = _tree(tmp_path / "src", DISCOVERS)
    assert _loaded(src) == EXPECTED
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], seed=0, check_interpreters=False))
    refused = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped) and "listed-package" in o.reason}
    assert set(refused) >= {"plugins/alpha.py", "plugins/beta.py"}
    assert "plugins/__init__.py reads __path__ (its own folder)" in refused["plugins/alpha.py"]
    assert sorted(p.name for p in (tmp_path / "out" / "plugins").iterdir()) == ["__init__.py", "alpha.py", "beta.py"]
    assert _loaded(tmp_path / "out") == EXPECTED


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_the_same_package_loading_plugins_by_name_is_perturbed(tmp_path, transform):
    src = _tree(tmp_path / "src", BY_NAME)
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], seed=0, check_interpreters=False))
    assert {o.file for o in report.outcomes if isinstance(o, Applied)} >= {"plugins/alpha.py", "plugins/beta.py"}
    assert len(list((tmp_path / "out" / "plugins").glob("*.py"))) > 3  # new modules beside the plugins
    assert _loaded(tmp_path / "out") == EXPECTED


COMMAND = "import os\nimport re\n\n\nclass Command:\n    help = re.sub('a', 'b', os.sep)\n"
NESTED = {
    "plugins/__init__.py": DISCOVERS,
    "plugins/sub/__init__.py": "",
    "plugins/sub/gamma.py": PLUGIN.format(name="gamma"),
    "app/__init__.py": "",
    "app/management/__init__.py": "",
    "app/management/commands/__init__.py": "",
    "app/management/commands/tidy.py": COMMAND,
    "app/views.py": COMMAND,
    "app/templatetags/__init__.py": "",
    "app/templatetags/shop_tags.py": COMMAND,
}


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_folders_below_a_listing_package_and_the_folders_django_lists_are_refused(tmp_path, transform):
    src = make_tree(tmp_path / "src", NESTED)
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], seed=0, check_interpreters=False))
    refused = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped) and "listed-package" in o.reason}
    assert "plugins/__init__.py reads __path__" in refused["plugins/sub/gamma.py"]
    commands, tags = refused["app/management/commands/tidy.py"], refused["app/templatetags/shop_tags.py"]
    assert "app/management/commands: Django lists its modules as management commands" in commands
    assert "app/templatetags: Django lists its modules as template libraries" in tags
    assert "app/views.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}  # the app itself is not
    assert sorted(p.name for p in (tmp_path / "out" / "app" / "management" / "commands").iterdir()) == [
        "__init__.py",
        "tidy.py",
    ]


@pytest.mark.parametrize(
    ("init", "found"),
    [
        ("register_plugins(linter, __path__[0])\n", "reads __path__ (its own folder)"),
        ("for info in pkgutil.iter_modules(__path__):\n    pass\n", "reads __path__ (its own folder)"),
        ("HERE = os.path.dirname(__file__)\nNAMES = os.listdir(HERE)\n", "lists files (listdir) beside __file__"),
        ("FILES = sorted(Path(__file__).parent.glob('*.py'))\n", "lists files (glob) beside __file__"),
        ("FILES = sorted(Path(__file__).parent.rglob('*.py'))\n", "lists files (rglob) beside __file__"),
        ("from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n", None),
        # astroid 2.x lists its `brain` folder below: that folder is listed (listed_elsewhere), not this one
        ("BRAIN = os.path.join(os.path.dirname(__file__), 'brain')\nfor m in os.listdir(BRAIN):\n    pass\n", None),
        (
            "B = Path(__file__).parent / 'brain'\nX = os.listdir(os.path.dirname(__file__))\n",
            "lists files (listdir) beside __file__",
        ),
        (
            "DATA = os.path.join(os.path.dirname(__file__), 'data.json')\nos.listdir('x')\n",
            "lists files (listdir) beside __file__",
        ),
        (
            "UP = os.path.join(os.path.dirname(__file__), '..', 'up')\nos.walk(UP)\n",
            "lists files (walk) beside __file__",
        ),
        ("UP = Path(__file__).parent.parent / 'up'\nos.walk(UP)\n", "lists files (walk) beside __file__"),
        (
            "UP = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'up')\nos.walk(UP)\n",
            "lists files (walk) beside __file__",
        ),
        ("SUB = Path(__file__).parent / 'sub'\nos.walk(SUB)\n", None),
        ("DATA = os.path.join(os.path.dirname(__file__), 'data.json')\n", None),
        ("__path__ = [HERE]\n", None),  # rebinding is its own refusal (package-path-rebound)
        ("commands = {name: 'django.core' for name in find_commands(__path__[0])}\n", None),  # lists commands/
        ("test = TestRunner.make_test_runner_in(__path__[0])  # noqa: F821\n", None),  # astropy: a path kept
        ("import sub.__path__helpers\nx.__path__\n", None),
    ],
)
def test_what_counts_as_listing_the_own_folder(init, found):
    assert lists_own_folder(init) == found


# sqlfluff 0.8's rule loader, in another package, globs the rules folder and imports `Rule_<stem>` from each file.
LOADER = """import os
from glob import glob
from importlib import import_module


def load_rules(
    path=os.path.join(os.path.dirname(__file__), "../../rules", "R*.py"),
):
    found = []
    for module in sorted(glob(path)):
        stem = os.path.splitext(os.path.basename(module))[0]
        found.append(getattr(import_module("app.rules." + stem), "Rule_" + stem).__name__)
    return found
"""
RULE = "import os\nimport re\n\n\nclass Rule_{stem}:\n    sep = re.sub('a', 'b', os.sep)\n"
GLOBBED = {
    "app/__init__.py": "",
    "app/core/__init__.py": "",
    "app/core/loading/__init__.py": "",
    "app/core/loading/loader.py": LOADER,
    "app/rules/__init__.py": "",
    **{f"app/rules/{stem}.py": RULE.format(stem=stem) for stem in ("R001", "R002")},
    "app/other.py": RULE.format(stem="Other"),
}


def _rules(root: Path) -> str:
    return _printed(root, "from app.core.loading.loader import load_rules; print(load_rules())")


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_a_folder_another_module_globs_gets_no_new_module(tmp_path, transform):
    src = make_tree(tmp_path / "src", GLOBBED)
    assert _rules(src) == "['Rule_R001', 'Rule_R002']\n"
    config = ApplyConfig([transform], seed=0, fraction=1.0, check_interpreters=False)
    report = apply_tree(src, tmp_path / "out", config)
    refused = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped) and "listed-package" in o.reason}
    assert set(refused) == {"app/rules/R001.py", "app/rules/R002.py"}
    assert "app/rules: app/core/loading/loader.py lists it" in refused["app/rules/R001.py"]
    assert "app/other.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}  # its package is not
    assert sorted(p.name for p in (tmp_path / "out" / "app" / "rules").iterdir()) == [
        "R001.py",
        "R002.py",
        "__init__.py",
    ]
    assert _rules(tmp_path / "out") == "['Rule_R001', 'Rule_R002']\n"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (LOADER, ["a/rules"]),
        ("import os\nP = os.path.join(os.path.dirname(__file__), '..', '..', 'rules')\nos.listdir(P)\n", ["a/rules"]),
        ("from pathlib import Path\nFILES = (Path(__file__).parent / 'plugins').glob('*.py')\n", ["a/b/c/plugins"]),
        ("import glob, os\nglob.glob(os.path.join(os.path.dirname(__file__), '*.py'))\n", ["a/b/c"]),
        ("import pkgutil, a.rules\nMODS = list(pkgutil.iter_modules(a.rules.__path__))\n", ["a/rules"]),
        # not a listing of modules, not a folder built from __file__, not a listing with the package's path
        ("import glob, os\nglob.glob(os.path.join(os.path.dirname(__file__), '*.json'))\n", []),
        ("import os\nHERE = os.path.dirname(__file__)\nos.listdir('rules')\n", []),
        ("import os\nos.listdir('.')\nNAME = '.'.join([__file__, 'x'])\n", []),
        ("import a.rules\nWHERE = a.rules.__path__\n", []),
        ("def broken(:\n", []),
    ],
)
def test_which_folders_a_module_names_for_a_listing(text, named):
    packages = ["a", "a/rules", "a/b", "a/b/c", "a/b/c/plugins"]
    from repoanchor.perturb.mirage.file_paths import folders_named

    assert folders_named("a/b/c/loader.py", text, packages) == named


@pytest.mark.parametrize("call", ["glob('*.py')", "rglob('*.py')", "iterdir()"])
def test_a_module_listing_another_folder_by_any_listing_call_is_found(tmp_path, call):
    loader = f"from pathlib import Path\nFILES = sorted((Path(__file__).parent.parent / 'rules').{call})\n"
    src = make_tree(tmp_path, {"a/__init__.py": "", "a/rules/__init__.py": "", "a/core/load.py": loader})
    from repoanchor.perturb.mirage.listing import listed_elsewhere

    assert listed_elsewhere(src) == {"a/rules": ("a/core/load.py lists it", call.startswith("rglob"), False)}


BRAIN_INIT = """import importlib
import os

BRAIN = os.path.join(os.path.dirname(__file__), "brain")
LOADED = [importlib.import_module("a.brain." + n[:-3]) for n in sorted(os.listdir(BRAIN)) if n.endswith(".py")]
"""


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_a_package_listing_a_folder_below_it_is_perturbed_but_not_that_folder(tmp_path, transform):
    """astroid 2.x: its `__init__` imports every module of `brain/` (no __init__.py there); the package's other
    modules are fair game, the brain folder gets nothing new."""
    files = {"a/__init__.py": BRAIN_INIT, "a/core.py": COMMAND, "a/brain/brain_x.py": PLUGIN.format(name="x")}
    src = make_tree(tmp_path / "src", files)
    loaded = "import a; print([m.__name__ for m in a.LOADED])"
    assert _printed(src, loaded) == "['a.brain.brain_x']\n"
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], seed=0, fraction=1.0, check_interpreters=False))
    assert "a/core.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}
    reasons = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped)}
    assert "a/__init__.py" not in reasons.get("a/core.py", "")
    listed = "listed-package: a/brain: a/__init__.py lists it"
    assert listed in reasons["a/brain/brain_x.py"] if transform == "proxy-imports" else "a/brain/brain_x.py" in reasons
    assert sorted(p.name for p in (tmp_path / "out" / "a" / "brain").iterdir()) == ["brain_x.py"]
    assert _printed(tmp_path / "out", loaded) == "['a.brain.brain_x']\n"


IMPORTED_PATH = {  # astroid 2.13: const.py builds the brain folder's path, __init__.py imports what it lists
    "a/__init__.py": "from importlib import import_module\n\nfrom a.const import BRAIN\n\nLOADED = sorted(\n"
    "    import_module('a.brain.' + p.stem).__name__\n"
    "    for p in BRAIN.iterdir()\n"
    "    if p.suffix == '.py' and p.stem != '__init__'\n)\n",
    "a/const.py": "from pathlib import Path\n\nBRAIN = Path(__file__).parent / 'brain'\n",
    "a/core.py": COMMAND,
    "a/brain/__init__.py": "",
    "a/brain/brain_x.py": PLUGIN.format(name="x"),
}


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_a_folder_listed_through_an_imported_path_gets_no_new_module(tmp_path, transform):
    src = make_tree(tmp_path / "src", IMPORTED_PATH)
    loaded = "import a; print(a.LOADED)"
    assert _printed(src, loaded) == "['a.brain.brain_x']\n"
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], seed=0, fraction=1.0, check_interpreters=False))
    assert "a/core.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert sorted(p.name for p in (tmp_path / "out" / "a" / "brain").iterdir()) == ["__init__.py", "brain_x.py"]
    assert _printed(tmp_path / "out", loaded) == "['a.brain.brain_x']\n"


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_an_init_that_constants_made_read_its_file_is_judged_as_the_source_has_it(tmp_path, transform):
    """astroid 2.13 stacked: constant-externalization gives `__init__.py` a loader reading JSON beside `__file__`,
    and with its `iterdir()` that read as a listing of its own folder, refusing the whole package."""
    src = make_tree(tmp_path / "src", IMPORTED_PATH)
    config = ApplyConfig(["constant-externalization", transform], seed=0, fraction=1.0, check_interpreters=False)
    report = apply_tree(src, tmp_path / "out", config)
    assert "__file__" in (tmp_path / "out" / "a" / "__init__.py").read_text()  # the loader constants wrote
    applied = {(o.transform, o.file) for o in report.outcomes if isinstance(o, Applied)}
    assert (transform, "a/core.py") in applied
    modules = sorted(p.name for p in (tmp_path / "out" / "a" / "brain").glob("*.py"))  # constants' JSON beside them
    assert modules == ["__init__.py", "brain_x.py"]
    assert _printed(tmp_path / "out", "import a; print(a.LOADED)") == "['a.brain.brain_x']\n"


# pydicom's util/generate_cids/generate_concept_dicts.py: a code generator run by hand, which names the package's
# folder (to write a module there) and globs its own downloads.
GENERATOR = """from pathlib import Path
SRC = Path(__file__).parent.parent.parent / "src" / "pkg"
ZIPS = sorted(Path("downloads").glob("*.zip"))
"""


@pytest.mark.parametrize(
    ("where", "listed"),
    [
        ("util/generate/gen.py", {}),
        ("src/pkg/tools/gen.py", {"src/pkg": ("src/pkg/tools/gen.py lists it", False, False)}),
    ],
)
def test_a_script_outside_the_packages_lists_nothing_they_import(tmp_path, where, listed):
    files = {"src/pkg/__init__.py": "", "src/pkg/tools/__init__.py": "", where: GENERATOR}
    src = make_tree(tmp_path, files)
    from repoanchor.perturb.mirage.listing import listed_elsewhere

    assert listed_elsewhere(src) == listed


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_the_listing_is_read_from_the_source_when_constants_moved_its_path_first(tmp_path, transform):
    """constant-externalization runs first and moves the loader's path strings to a JSON file (sqlfluff 0.6's
    stacked variant); the folder it lists is still refused."""
    src = make_tree(tmp_path / "src", GLOBBED)
    config = ApplyConfig(["constant-externalization", transform], seed=0, fraction=1.0, check_interpreters=False)
    report = apply_tree(src, tmp_path / "out", config)
    loader = (tmp_path / "out" / "app" / "core" / "loading" / "loader.py").read_text()
    assert '"../../rules"' not in loader  # the path's strings were moved out of the module
    refused = {o.file for o in report.outcomes if isinstance(o, Skipped) and "listed-package" in o.reason}
    assert refused == {"app/rules/R001.py", "app/rules/R002.py"}
    assert _rules(tmp_path / "out") == "['Rule_R001', 'Rule_R002']\n"


def test_a_tree_that_is_itself_a_package_has_its_own_folder_listing_found(tmp_path):
    """A package checked out alone (its `__init__.py` at the tree's root) that lists its own folder."""
    src = make_tree(tmp_path, {"__init__.py": DISCOVERS, "alpha.py": PLUGIN.format(name="alpha")})
    from repoanchor.perturb.mirage.listing import listed_elsewhere

    assert listed_elsewhere(src) == {"": ("__init__.py reads __path__ (its own folder)", True, False)}


TEST_LISTS_PACKAGE = """import os

import pytest

import pkg


@pytest.mark.parametrize("name", [n for n in os.listdir(pkg.__path__[0]) if not n.startswith("_")])
def test_each_module_imports(name):
    __import__("pkg." + name[:-3])
"""


@pytest.mark.parametrize("tests_package", [True, False])
@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_a_folder_a_test_lists_gets_no_new_module(tmp_path, transform, tests_package):
    """pydantic 1.10's `test_v1.py` parametrizes a test by `os.listdir(pydantic.__path__[0])`: a hidden twin there
    was one more test in the variant (22 added tests under masking), which no PASS_TO_PASS list would name."""
    files = {"pkg/__init__.py": "", "pkg/alpha.py": PLUGIN.format(name="alpha"), "pkg/beta.py": "X = 1\n"}
    files |= {"tests/test_modules.py": TEST_LISTS_PACKAGE} | ({"tests/__init__.py": ""} if tests_package else {})
    src = make_tree(tmp_path / "src", files)
    config = ApplyConfig([transform], seed=0, fraction=1.0, check_interpreters=False)
    report = apply_tree(src, tmp_path / "out", config)
    refused = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped) and "listed-package" in o.reason}
    assert "pkg/alpha.py" in refused
    assert "pkg: tests/test_modules.py lists it" in refused["pkg/alpha.py"]
    assert sorted(p.name for p in (tmp_path / "out" / "pkg").iterdir()) == ["__init__.py", "alpha.py", "beta.py"]


WALKS_PLUGINS = """import pkgutil

from a import plugins

LOADED = []


def _import_plugins():
    path = plugins.__path__
    for _, name, _ in pkgutil.walk_packages(path, plugins.__name__ + "."):
        __import__(name, fromlist=["_"]).register(LOADED)


_import_plugins()
"""
PUPGRADE = {
    "a/__init__.py": "",
    "a/data.py": WALKS_PLUGINS,
    "a/core.py": COMMAND,
    "a/plugins/__init__.py": "",
    "a/plugins/alpha.py": PLUGIN.format(name="alpha"),
}


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_a_package_walked_through_its_path_held_in_a_name_gets_no_new_module(tmp_path, transform):
    """pyupgrade's `_data.py`: `plugins_path = _plugins.__path__`, then `pkgutil.walk_packages(plugins_path, ...)`
    imports every module of `_plugins`, and each registers its fixers: a hidden twin there registered them twice."""
    src = make_tree(tmp_path / "src", PUPGRADE)
    loaded = "import a.data; print(a.data.LOADED)"
    assert _printed(src, loaded) == "['alpha:x/y']\n"
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], seed=0, fraction=1.0, check_interpreters=False))
    refused = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped) and "listed-package" in o.reason}
    assert "a/data.py lists it" in refused["a/plugins/alpha.py"]
    assert "a/core.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert sorted(p.name for p in (tmp_path / "out" / "a" / "plugins").iterdir()) == ["__init__.py", "alpha.py"]
    assert _printed(tmp_path / "out", loaded) == "['alpha:x/y']\n"


FIND_MODULES = """import pkgutil
from importlib import import_module


def find_modules(import_path, recursive=False):
    package = import_module(import_path)
    for _, name, ispkg in pkgutil.iter_modules(package.__path__, import_path + "."):
        if not ispkg:
            yield name
"""
TEST_FINDS_MODULES = """from pkg.utils import find_modules


def test_find_modules():
    assert list(find_modules("pkg.debug")) == ["pkg.debug.console", "pkg.debug.tbtools"]
"""


@pytest.mark.parametrize("transform", ["proxy-imports", "runtime-target-masking"])
def test_a_package_a_test_lists_by_its_dotted_name_gets_no_new_module(tmp_path, transform):
    """werkzeug 3.1's `test_find_modules` lists `werkzeug.debug` through `utils.find_modules("werkzeug.debug")`."""
    files = {"src/pkg/__init__.py": "", "src/pkg/utils.py": FIND_MODULES, "src/pkg/debug/__init__.py": ""}
    files |= {"src/pkg/debug/console.py": "import os\n\nSEP = os.sep\n", "src/pkg/debug/tbtools.py": "import sys\n"}
    src = make_tree(tmp_path / "src", files | {"tests/test_utils.py": TEST_FINDS_MODULES})
    assert listed_elsewhere(src) == {"src/pkg/debug": ("tests/test_utils.py lists it by its dotted name", False, False)}
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], seed=0, fraction=1.0, check_interpreters=False))
    refused = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped) and "listed-package" in o.reason}
    assert "src/pkg/debug/console.py" in refused
    assert sorted(p.name for p in (tmp_path / "out/src/pkg/debug").iterdir()) == [
        "__init__.py",
        "console.py",
        "tbtools.py",
    ]
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "out/src"), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_utils.py"]
    done = subprocess.run(command, cwd=tmp_path / "out", env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]


@pytest.mark.parametrize(
    ("call", "listed"),
    [
        ("find_modules('pkg.debug')", {"pkg/debug": False}),
        ("pkgutil.walk_packages('pkg.debug')", {"pkg/debug": True}),
        ("load_plugins('pkg.debug', recursive=True)", {"pkg/debug": True}),
        ("import_module('pkg.debug')", {}),  # imports it, lists nothing
        ("find_modules('pkg.other')", {}),  # no package of the tree
    ],
)
def test_which_calls_list_a_package_by_its_dotted_name(call: str, listed: dict[str, bool]):
    assert dotted_listings(f"import pkgutil\nx = {call}\n".encode(), {"pkg": "pkg", "pkg.debug": "pkg/debug"}) == listed


# sympy 1.13.3's test_args.py: walks the package from `os.path.split(__file__)[0]` up `os.pardir`, skips `_` names,
# imports every other module and wants a test for each class defined there.
WALKS_CLASSES = """import os


def test_every_class_is_known():
    this = os.path.split(__file__)[0]
    top = os.path.abspath(os.path.join(this, os.pardir, "pkg"))
    found = []
    for root, dirs, files in os.walk(top):
        for file in sorted(files):
            if file.startswith(("_", "test_")):
                continue
            if file.endswith(".py"):
                mod = __import__("pkg." + file[:-3], fromlist=["x"])
                found += [n for n, v in vars(mod).items() if isinstance(v, type) and v.__module__ == mod.__name__]
    assert sorted(found) == ["Circle"]
"""
WALKED = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": "class Circle:\n    def area(self):\n        return 3\n",
    "pkg/use.py": "from pkg.shapes import Circle\n\n\ndef make():\n    return Circle().area()\n",
    "tests/test_walk.py": WALKS_CLASSES,
}


@pytest.mark.parametrize(("transform", "perturbed"), [("proxy-imports", True), ("runtime-target-masking", False)])
def test_a_walk_skipping_private_names_refuses_masks_and_keeps_proxies(tmp_path, transform, perturbed):
    src = make_tree(tmp_path / "src", WALKED)
    report = apply_tree(src, tmp_path / "out", ApplyConfig([transform], fraction=1.0, seed=0))
    applied = [o.file for o in report.outcomes if isinstance(o, Applied)]
    reasons = [o.reason for o in report.outcomes if isinstance(o, Skipped)]
    assert bool(applied) == perturbed, (applied, reasons)
    if not perturbed:
        assert any("tests/test_walk.py lists it" in reason for reason in reasons), reasons
    run = run_tests(tmp_path / "out")
    assert run.returncode == 0, run.stdout
