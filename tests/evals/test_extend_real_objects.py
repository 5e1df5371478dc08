"""Proxy Chain Completion on what real packages forward: C functions (`math.sqrt`), C types
(`operator.itemgetter`), a re-exported module (`os.path`), a descriptor (`dict.fromkeys`' classmethod
descriptor), a function `functools.wraps` made look like a C slot (`object.__init__`), and an optional
dependency imported under try/except that the environment does not have. Real proxy-imports, real probe,
the project's real tests."""

from __future__ import annotations

import functools
import json
import math
import operator
import os.path
import subprocess
from pathlib import Path

import pytest

from repoanchor.evals.suites.extend import FamiliesConfig, build_extend_tasks
from repoanchor.evals.suites.extend.common import read_json
from repoanchor.evals.suites.extend.probe import functions_of, identity
from repoanchor.perturb.metadata import variant_metadata
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.variant_git import init_single_commit
from tests.support.trees import make_tree

OPTIONAL = "from colorama_is_not_installed import Fore"
FILES = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": (
        "import functools\n\n\n@functools.wraps(object.__init__)\ndef init_like(self, *args, **kwargs):\n"
        '    return None\n\n\nfromkeys = dict.__dict__["fromkeys"]\n'
    ),
    "pkg/core.py": (
        "from math import sqrt\nfrom operator import itemgetter\nfrom os import path\n\n"
        f"from pkg.helpers import fromkeys, init_like\n\ntry:\n    {OPTIONAL}\nexcept ImportError:\n"
        "    Fore = None\n\n\ndef hypot(a, b):\n    return sqrt(a * a + b * b)\n"
    ),
    "tests/test_core.py": (
        "from pkg import core\n\n\ndef test_hypot():\n    assert core.hypot(3, 4) == 5\n\n\n"
        "def test_forwarded_names():\n    assert core.path.join('a', 'b') == 'a/b'\n"
        "    assert core.itemgetter(0)([7]) == 7\n    assert core.fromkeys(dict, 'ab') == {'a': None, 'b': None}\n"
        "    assert core.init_like.__name__ == '__init__'\n    assert core.Fore is None\n"
    ),
}
ROW = {"instance_id": "acme__pkg-1", "repo": "acme/pkg", "problem_statement": "hypot is slow", "patch": ""}
TESTS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def perturbed(root: Path, files: dict[str, str], transform: str, seed: int) -> tuple[Path, dict]:
    """(`root`/variant, its metadata): `files` under `root`/src with `transform` at every site."""
    src = make_tree(root / "src", files)
    config = ApplyConfig([transform], fraction=1.0, seed=seed, workers=1, check_interpreters=False)
    report = apply_tree(src, root / "variant", config)
    return root / "variant", variant_metadata(src, config, report)


@pytest.fixture(scope="module")
def variant(tmp_path_factory) -> tuple[Path, dict]:
    return perturbed(tmp_path_factory.mktemp("objects"), FILES, "proxy-imports", seed=1)


def _build(variant, out: Path, k: int):
    tree, metadata = variant
    config = FamiliesConfig(families=["proxy_chain"], proxy_chain={"k": k}, test_env=TESTS)
    (task,) = build_extend_tasks(tree, metadata, ROW, out, families_config=config, seed=3)
    return task


def test_every_chain_but_the_optional_one_is_built_and_self_checked(variant, tmp_path):
    routed = [e["imported"] for e in variant[1]["path_resolution_map"] if e["kind"] == "import_proxy"]
    assert OPTIONAL in routed, "proxy-imports did not route the optional import: the test proves nothing"
    usable = len(routed) - 1
    task = _build(variant, tmp_path / "out", k=usable)
    assert task.status == "ok", task.reason
    assert task.self_check.status == "passed", task.self_check
    chains = read_json(Path(task.ground_truth))["chains"]
    assert sorted(c["imported"] for c in chains) == sorted(i for i in routed if i != OPTIONAL)
    identities = {name: c["identities"][name] for c in chains for name in c["names"]}
    assert identities["sqrt"] == {"kind": "definition", "module": "math", "qualname": "sqrt", "files": ["<external>"]}
    assert identities["itemgetter"]["qualname"] == "itemgetter"
    assert identities["path"]["kind"] == "module"
    assert identities["fromkeys"]["kind"] == "value"  # a descriptor: compared by type and repr
    assert identities["init_like"] == {
        "kind": "definition", "module": "pkg.helpers", "qualname": "object.__init__", "files": ["pkg/helpers.py"]
    }  # fmt: skip


def test_asking_for_the_optional_chain_too_says_how_many_are_usable(variant, tmp_path):
    routed = [e for e in variant[1]["path_resolution_map"] if e["kind"] == "import_proxy"]
    task = _build(variant, tmp_path / "out", k=len(routed))
    assert task.status == "skipped"
    assert f"{len(routed) - 1} usable" in task.reason


def test_a_variant_whose_only_chain_is_optional_says_so(variant, tmp_path):
    tree, metadata = variant
    only = [e for e in metadata["path_resolution_map"] if e.get("imported") == OPTIONAL]
    config = FamiliesConfig(families=["proxy_chain"], proxy_chain={"k": 1}, test_env=TESTS, self_check=False)
    (task,) = build_extend_tasks(tree, {**metadata, "path_resolution_map": only}, ROW, tmp_path, families_config=config)
    assert task.status == "skipped"
    assert "no proxy chain routes an import that works in the instance's environment" in task.reason
    assert "colorama_is_not_installed" in task.reason
    assert "Traceback" not in task.reason


LAZY = {
    "pkg/__init__.py": "",
    "pkg/conf.py": (
        "class LazySettings:\n"
        "    def _setup(self):\n"
        "        raise RuntimeError('settings are not configured')\n\n"
        "    def __getattr__(self, name):\n"
        "        self._setup()\n\n"
        "    __class__ = property(lambda self: self._setup())\n\n"
        "    def __repr__(self):\n"
        "        return '<LazySettings [Unevaluated]>'\n\n\n"
        "class Opaque:\n"
        "    def __repr__(self):\n"
        "        raise RuntimeError('no repr')\n\n\n"
        "settings = LazySettings()\nopaque = Opaque()\n"
    ),
    "pkg/views.py": "from pkg.conf import settings\n\n\ndef view():\n    return settings\n",
    "pkg/other.py": "from pkg.conf import opaque\n\n\ndef get():\n    return opaque\n",
    "tests/test_views.py": "from pkg import views\n\n\ndef test_view():\n    assert views.view() is not None\n",
}


@pytest.mark.parametrize(
    ("entry", "status", "reason"),
    [
        ("pkg/views.py", "ok", None),
        ("pkg/other.py", "skipped", "what it forwards cannot be described there: RuntimeError: no repr"),
    ],
    ids=["lazy-settings", "failing-repr"],
)
def test_chains_forwarding_objects_that_resist_description(tmp_path, entry, status, reason):
    """Django's `settings` evaluates itself when asked its `__class__` (isinstance does), and fails unconfigured:
    the probe reads real types, so its chain is a task. An object it cannot describe at all leaves its chain out as
    unusable, not as a broken variant."""
    tree, metadata = perturbed(tmp_path, LAZY, "proxy-imports", seed=1)
    chains = [e for e in metadata["path_resolution_map"] if e.get("visible_path") == entry]
    assert chains, f"proxy-imports routed nothing in {entry}: the test proves nothing"
    config = FamiliesConfig(families=["proxy_chain"], proxy_chain={"k": 1}, test_env=TESTS)
    scoped = {**metadata, "path_resolution_map": chains}
    (task,) = build_extend_tasks(tree, scoped, ROW, tmp_path / "out", families_config=config, seed=3)
    assert task.status == status, task.reason
    if status == "ok":
        assert task.self_check.status == "passed", task.self_check
        (chain,) = read_json(Path(task.ground_truth))["chains"]
        assert chain["identities"]["settings"]["repr"] == "<LazySettings [Unevaluated]>"
    else:
        assert reason in task.reason


NO_GDAL = {
    "pkg/__init__.py": "",
    "pkg/geo/__init__.py": (
        "from pkg.geo.envelope import Envelope\n\nraise ImportError('Could not find the GDAL library')\n"
    ),
    "pkg/geo/envelope.py": "class Envelope:\n    pass\n\n\nclass OGREnvelope:\n    pass\n",
    "pkg/shapes.py": "from pkg.geo import Envelope\n",
    "pkg/prototypes.py": "from pkg.geo.envelope import OGREnvelope\n",
    "tests/test_nothing.py": "def test_nothing():\n    assert True\n",
}


def test_a_chain_is_judged_as_a_fresh_process_would_whatever_failed_before_it(tmp_path):
    """Like Django's gis without GDAL: `pkg.geo` fails after importing `pkg.geo.envelope`, which Python leaves in
    sys.modules, so `from pkg.geo.envelope import OGREnvelope` worked in the probe once an earlier chain had
    failed on `pkg.geo`, and failed at check time, where that chain was not probed: the ground truth was rejected.
    Both chains are unavailable here, as each is in a fresh interpreter."""
    tree, metadata = perturbed(tmp_path, NO_GDAL, "proxy-imports", seed=1)
    entries = {e.get("visible_path"): e for e in metadata["path_resolution_map"] if e["kind"] == "import_proxy"}
    assert {"pkg/shapes.py", "pkg/prototypes.py"} <= set(entries), "a chain is missing: the test proves nothing"
    ordered = [entries["pkg/shapes.py"], entries["pkg/prototypes.py"]]  # the failing package first
    config = FamiliesConfig(families=["proxy_chain"], proxy_chain={"k": 1}, test_env=TESTS)
    scoped = {**metadata, "path_resolution_map": ordered}
    (task,) = build_extend_tasks(tree, scoped, ROW, tmp_path / "out", families_config=config, seed=3)
    assert task.status == "skipped", task.reason
    assert "all 2 route imports that fail there" in task.reason
    assert "Could not find the GDAL library" in task.reason


@pytest.mark.parametrize(
    ("obj", "kind", "qualname"),
    [
        (math.sqrt, "definition", "sqrt"),
        (operator.itemgetter, "definition", "itemgetter"),
        (functools.wraps(object.__init__)(lambda self: None), "definition", "object.__init__"),
        (dict.__dict__["fromkeys"], "value", None),
        (str.join, "value", None),
        (os.path, "module", None),
    ],
    ids=["c-function", "c-type", "wraps-a-slot", "classmethod-descriptor", "method-descriptor", "module"],
)
def test_identity_of_objects_without_code(obj, kind, qualname, tmp_path):
    found = identity(obj, str(tmp_path))
    assert found["kind"] == kind
    assert found.get("qualname") == qualname
    json.dumps(found)  # crosses a process boundary as JSON


def test_functions_of_a_class_whose_methods_wrap_c_slots():
    class Wrapped:
        @functools.wraps(object.__init__)
        def __init__(self):
            pass

        __repr__ = object.__repr__  # a slot wrapper, no Python code at all

    (function,) = functions_of(Wrapped)
    assert function.__code__.co_name == "__init__"


def test_a_chain_forwarding_a_module_generated_at_install_is_left_out(tmp_path):
    """setuptools_scm writes `_version.py` at install, from the checkout's git state: its value differs between
    the intact variant and any answer's checkout, so a chain forwarding it cannot be checked; it is left out,
    whether it imports the generated module or a package that re-exports its value (pytest-10081's
    `from _pytest import __version__`)."""
    files = {
        "pkg/__init__.py": "from pkg._version import VERSION\n",
        "pkg/core.py": "from math import sqrt\nfrom pkg._version import VERSION\n",
        "pkg/cli.py": "from pkg import VERSION as RELEASE\n",
        "tests/test_core.py": "from pkg import core\n\n\ndef test_sqrt():\n    assert core.sqrt(4) == 2\n",
        ".gitignore": "pkg/_version.py\n",
    }
    tree, metadata = perturbed(tmp_path, files, "proxy-imports", seed=1)
    routed = {e["imported"] for e in metadata["path_resolution_map"] if e["kind"] == "import_proxy"}
    assert "from pkg import VERSION as RELEASE" in routed, "the re-export was not routed: the test proves nothing"
    init_single_commit(tree)
    # A version that follows the checkout, as a dirty tree's setuptools_scm version does.
    setup = "python -c \"import os; open('pkg/_version.py', 'w').write('VERSION = %r' % os.getcwd())\""
    families = FamiliesConfig(families=["proxy_chain"], proxy_chain={"k": 1}, test_env=TESTS, setup_cmd=setup)
    (task,) = build_extend_tasks(tree, metadata, ROW, tmp_path / "out", families_config=families)
    assert task.status == "ok", task.reason
    assert task.self_check.status == "passed", task.self_check
    chains = read_json(Path(task.ground_truth))["chains"]
    assert [c["imported"] for c in chains] == ["from math import sqrt"]


FAILING_IMPORTS = {
    "pkg/win.py": (
        "import colorama_is_not_installed\n\nCOLOUR = 'bright-magenta'\nDEPTH = 256\n",
        "pkg.win (ModuleNotFoundError: No module named 'colorama_is_not_installed')",
    ),
    "pkg/gallery.py": (  # seaborn's example scripts download their datasets when imported
        "DATA = open('downloaded/tips.csv').read()\n\nCOLOUR = 'bright-magenta'\nDEPTH = 256\n",
        "pkg.gallery (FileNotFoundError: [Errno 2] No such file or directory: 'downloaded/tips.csv')",
    ),
}


@pytest.mark.parametrize("failing", sorted(FAILING_IMPORTS))
def test_constants_of_a_module_that_cannot_import_here_are_passed_over(tmp_path, failing):
    """pytest's Windows-only code imports colorama at module level, seaborn's examples fetch data: their constants
    cannot be checked here, so Missing Constant Recovery takes its constants from modules that do import."""
    values = {"RATE": "0.25", "LIMIT": "4096", "LABEL": '"ledger-total"', "WIDTH": "72"}
    source, reason = FAILING_IMPORTS[failing]
    files = {
        "pkg/__init__.py": "",
        "pkg/good.py": "".join(f"{name} = {value}\n" for name, value in values.items()),
        failing: source,
        "README.md": "Values: 0.25, 4096, ledger-total, 72, bright-magenta, 256.\n",
        "tests/test_good.py": "from pkg import good\n\n\ndef test_rate():\n    assert good.RATE == 0.25\n",
    }
    tree, metadata = perturbed(tmp_path, files, "constant-externalization", seed=2)
    externalized = {e["visible_path"] for e in metadata["path_resolution_map"] if e["kind"] == "json_value"}
    assert externalized == {"pkg/good.py", failing}, "both modules must hold constants for the test to mean anything"
    usable = sum(
        e["visible_path"] == "pkg/good.py" for e in metadata["path_resolution_map"] if e["kind"] == "json_value"
    )

    def build(k: int, out: str):
        families = FamiliesConfig(families=["missing_constant"], missing_constant={"k": k}, test_env=TESTS)
        (task,) = build_extend_tasks(tree, metadata, ROW, tmp_path / out, families_config=families)
        return task

    task = build(usable, "all-usable")
    assert task.status == "ok", task.reason
    assert {e["module"] for e in read_json(Path(task.ground_truth))["erased"]} == {"pkg.good"}
    short = build(usable + 1, "one-more")
    assert short.status == "skipped"
    assert f"not enough constants whose module imports: {usable} of" in short.reason
    assert reason in short.reason


PATHS = {
    "pkg/__init__.py": "",
    "pkg/settings.py": (
        "import os\n\nBASE_DIR = os.path.dirname(os.path.abspath(__file__))\n"
        "CONFIG_FILE = os.path.join(os.getcwd(), 'pkg.cfg')\n"
    ),
    "pkg/core.py": "from pkg.settings import BASE_DIR, CONFIG_FILE\n\n\ndef where():\n    return CONFIG_FILE\n",
    "tests/test_core.py": "from pkg import core\n\n\ndef test_where():\n    assert core.where().endswith('pkg.cfg')\n",
}


def test_values_holding_the_checkout_path_agree_between_checkouts(tmp_path):
    """pylint's PYLINTRC (found from the working directory) and a BASE_DIR hold the checkout's path: the build's
    probe and the self-check's, in another checkout, must read them alike (`<root>`)."""
    identities = _every_chain_self_checked(
        tmp_path, *perturbed(tmp_path, PATHS, "proxy-imports", seed=2), "CONFIG_FILE"
    )
    assert identities["CONFIG_FILE"]["repr"] == "'<root>/pkg.cfg'"
    assert identities["BASE_DIR"]["repr"] == "'<root>/pkg'"


VERSIONED = {  # Sphinx's __display_version__ ('4.2.0+/c1bee63') asks git for the checkout's commit at import
    "pkg/__init__.py": "",
    "pkg/settings.py": (
        "import os\nimport subprocess\n\nHERE = os.path.dirname(os.path.abspath(__file__))\n"
        "SHORT = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=HERE, capture_output=True, text=True)\n"
        "DISPLAY = '4.2.0+/' + SHORT.stdout.strip()\n"
    ),
    "pkg/core.py": "from pkg.settings import DISPLAY\n\n\ndef shown():\n    return DISPLAY\n",
    "tests/test_core.py": "from pkg import core\n\n\ndef test_shown():\n    assert core.shown().startswith('4.2.0')\n",
}


def test_a_value_holding_the_checkouts_commit_agrees_between_checkouts(tmp_path):
    """The build probes a clone of the variant; the self-check, the task's own one-commit repository: their
    commits differ, and sphinx-doc__sphinx-9591's proxy_chain task was rejected by its own self-check."""
    tree, metadata = perturbed(tmp_path, VERSIONED, "proxy-imports", seed=2)
    for step in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v"]):
        subprocess.run(["git", *step], cwd=tree, check=True)
    identities = _every_chain_self_checked(tmp_path, tree, metadata, "DISPLAY")
    assert identities["DISPLAY"]["repr"] == "'4.2.0+/<commit>'"


def _every_chain_self_checked(tmp_path: Path, tree: Path, metadata: dict, name: str) -> dict:
    """Every proxy chain of the variant as one proxy_chain task (`name` among the forwarded names), built and
    self-checked: the identities its ground truth records for each name."""
    routed = [e for e in metadata["path_resolution_map"] if e["kind"] == "import_proxy"]
    assert any(name in e["imported"] for e in routed), f"{name} is not forwarded: the test proves nothing"
    config = FamiliesConfig(families=["proxy_chain"], proxy_chain={"k": len(routed)}, test_env=TESTS)
    (task,) = build_extend_tasks(tree, metadata, ROW, tmp_path / "out", families_config=config, seed=3)
    assert task.status == "ok", task.reason
    assert task.self_check.status == "passed", task.self_check
    chains = read_json(Path(task.ground_truth))["chains"]
    return {each: c["identities"][each] for c in chains for each in c["names"]}


def test_constants_of_a_module_another_root_shadows_are_passed_over(tmp_path):
    """pylint's doc/data/messages/*/good.py: many top-level modules named `good`, one per example folder. With
    their folders on sys.path only the first is importable as `good`; the others' constants are passed over
    instead of failing the whole family ("module 'good' has no attribute ...")."""
    files = {
        "examples/alpha/good.py": "SPEED = 3.5\nLABEL = 'alpha-example'\n",
        "examples/beta/good.py": "SPEED = 7.25\nLABEL = 'beta-example'\n",
        "README.md": "Speeds 3.5 and 7.25; labels alpha-example and beta-example.\n",
        "tests/test_nothing.py": "def test_nothing():\n    assert True\n",
    }
    tree, metadata = perturbed(tmp_path, files, "constant-externalization", seed=2)
    entries = [e for e in metadata["path_resolution_map"] if e["kind"] == "json_value"]
    assert {e["visible_path"] for e in entries} == {"examples/alpha/good.py", "examples/beta/good.py"}
    usable = sum(e["visible_path"] == "examples/alpha/good.py" for e in entries)
    families = FamiliesConfig(families=["missing_constant"], missing_constant={"k": usable}, test_env=TESTS)
    (task,) = build_extend_tasks(tree, metadata, ROW, tmp_path / "out", families_config=families)
    assert task.status == "ok", task.reason
    erased = read_json(Path(task.ground_truth))["erased"]
    assert {e["value"] for e in erased} <= {3.5, "alpha-example"}
    families = FamiliesConfig(families=["missing_constant"], missing_constant={"k": usable + 1}, test_env=TESTS)
    (short,) = build_extend_tasks(tree, metadata, ROW, tmp_path / "short", families_config=families)
    assert short.status == "skipped"
    assert "good (shadowed by examples/alpha/good.py)" in short.reason


class _Lock:
    """As dask's SerializableLock: a fresh uuid token per instance, shown in its repr."""

    def __init__(self):
        import uuid

        self.token = str(uuid.uuid4())

    def __repr__(self):
        return f"<_Lock: {self.token}>"


def test_a_uuid_in_a_value_repr_is_masked(tmp_path):
    """xarray's HDF5_LOCK (a dask SerializableLock) has a new uuid in each process: the proxy_chain task of
    pydata__xarray-7233 was rejected by its own self-check until the uuid was masked."""
    first, second = identity(_Lock(), str(tmp_path)), identity(_Lock(), str(tmp_path))
    assert first == second
    assert first["repr"] == "<_Lock: <uuid>>"


def test_missing_constant_imports_only_the_first_candidates_it_needs(tmp_path):
    """40 modules hold a constant each and leave a mark when imported: one constant asked for imports one batch
    of them, not all 40 (SymPy's thousands of constants took the whole package's scan and imports before)."""
    from repoanchor.evals.suites.extend.constant_choice import BATCH

    mark = "import os\n\nopen(os.path.join(os.environ['MARKS'], __name__), 'w').close()\n"
    files = {"pkg/__init__.py": "", "README.md": " ".join(str(1000 + i) for i in range(40)) + "\n"}
    files |= {f"pkg/m{i}.py": f"{mark}RATE = {1000 + i}\n" for i in range(40)}
    files["tests/test_nothing.py"] = "def test_nothing():\n    assert True\n"
    tree, metadata = perturbed(tmp_path, files, "constant-externalization", seed=2)
    assert sum(e["kind"] == "json_value" for e in metadata["path_resolution_map"]) >= 40
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {**TESTS, "MARKS": str(marks)}
    families = FamiliesConfig(families=["missing_constant"], missing_constant={"k": 1}, test_env=env)
    (task,) = build_extend_tasks(tree, metadata, ROW, tmp_path / "out", families_config=families, seed=5)
    assert task.status == "ok", task.reason
    assert 1 <= len(list(marks.iterdir())) <= BATCH
