"""runtime-target-masking: variants behave like the original in fresh interpreters; decoys are
never imported, never opened and named by nothing.

Where the question is "nothing changed", the same probe runs on the original and on the
variant and the outputs (tree root blanked out) must be equal; decoy imports are watched with
an audit hook plus a ``sys.meta_path`` recorder while importing the package, importing every
module a walk lists, and running a pytest test that exercises it.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied
from repoanchor.perturb.tree import TreeReport
from tests.support.masking import PACKAGE, entries, mask, reasons, run_py
from tests.support.trees import make_tree

PROBE = r"""
import importlib, inspect, json, logging, pickle, sys
from unittest import mock
import pkg
import pkg.mod as m
from pkg.mod import Shape
import pkg.user, pkg.a, pkg.c, pkg.sub.deep, ns.inner.leaf
out = {}
out["names"] = list(vars(m))  # same keys in the same order: nothing of the forwarder is left
out["doc"] = m.__doc__
out["package"] = m.__package__
out["spec_name"] = m.__spec__.name
out["has_path"] = hasattr(m, "__path__")
out["isinstance"] = isinstance(pkg.user.make(), m.Shape) and isinstance(pkg.user.make(), Shape)
obj = pickle.loads(pickle.dumps(Shape(3)))
out["pickle"] = [type(obj) is Shape, obj == Shape(3), Shape.__module__, Shape.Side.__qualname__]
out["pickle_nested"] = type(pickle.loads(pickle.dumps(Shape.Side()))) is Shape.Side
out["exc"] = [m.NoBody.__doc__, m.NoBody.__module__]
out["area"] = m.area(3)
with mock.patch("pkg.mod.helpers.square", return_value=-1):
    out["patched_attr"] = m.area(3)
with mock.patch("pkg.mod._scale", return_value=5):
    out["patched_global"] = m.area(3)
out["logger"] = [m.log.name, logging.getLogger("pkg.mod") is m.log]
out["data"] = m.data()
out["own_source"] = m.own_source()
out["relative"] = [pkg.sub.deep.go(), pkg.sub.deep.mod is m]
out["star"] = [pkg.user.square(4), pkg.user.WHO, hasattr(pkg.user, "PUBLIC"), hasattr(pkg.user, "_private")]
out["cycles"] = [pkg.a.f(), pkg.a.b.g(), pkg.c.C, pkg.c.D, sys.modules["pkg.d"].late()]
out["namespace_pkg"] = ns.inner.leaf.value()
out["getsource"] = inspect.getsource(m.area).splitlines()[0]
out["loads"] = m.LOADS
reloaded = importlib.reload(m)
out["reload"] = [reloaded is m, m.LOADS, list(vars(m)) == out["names"], m.Shape is not Shape]
out["file"] = [m.__file__, inspect.getsourcefile(m), inspect.getsourcefile(Shape), m.__spec__.origin]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def masked(tmp_path_factory) -> tuple[Path, Path, TreeReport]:
    base = tmp_path_factory.mktemp("masked")
    src = make_tree(base / "src", PACKAGE)
    report = mask(src, base / "out", seed=4)
    return src, base / "out", report


def _probe(root: Path) -> dict:
    return json.loads(run_py(root, PROBE).stdout.replace(str(root), "<root>"))


def test_every_package_module_is_masked_and_refusals_have_reasons(masked):
    _, out, report = masked
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    modules = {rel for rel in PACKAGE if rel.endswith(".py") and not rel.endswith(("__init__.py", "__main__.py"))}
    assert applied == modules
    reason_classes = {r.split(":")[0] for rs in reasons(report).values() for r in rs}
    assert reason_classes == {"package-init", "script-module", "decoy-shortfall"}
    assert reasons(report)["pkg/star.py"] == [
        "decoy-shortfall: 0 of 3: no if-statement, import pair, function, comparison or constant"
    ]
    for module in applied:  # the module file forwards; its decoy folder is no package
        assert "__spec__.name" in (out / module).read_text()
        assert not (out / module.removesuffix(".py") / "__init__.py").exists()


def test_variant_behaves_like_the_original_everywhere(masked):
    src, out, _ = masked
    original, variant = _probe(src), _probe(out)
    assert original["file"] == ["<root>/pkg/mod.py"] * 4
    hidden = next(e["runtime_path"] for e in entries(masked[2], "wrapper_module") if e["visible_path"] == "pkg/mod.py")
    assert variant.pop("file") == [f"<root>/{hidden}"] * 4  # the public module IS the hidden file
    original.pop("file")
    assert variant == original
    assert variant["pickle"] == [True, True, "pkg.mod", "Shape.Side"]
    assert variant["has_path"] is False
    assert variant["reload"] == [True, 1, True, True]


@pytest.mark.parametrize(
    "command",
    [["-m", "pkg.mod"], ["-m", "pkg", "x"], ["-c", "import runpy; runpy.run_module('pkg.mod', run_name='__main__')"]],
)
def test_running_a_masked_module_as_main_behaves_as_before(masked, command: list[str]):
    src, out, report = masked
    assert reasons(report)["pkg/__main__.py"][0].startswith("script-module: __main__.py")

    def run(root: Path) -> str:
        env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.run([sys.executable, *command], cwd=root, env=env, capture_output=True, text=True, timeout=60)
        return f"{proc.returncode} {proc.stdout} {proc.stderr.count('Error')}"

    original = run(src)
    assert original.startswith("0 ")
    assert "main __main__ pkg pkg.mod 4 9" in original or "pkg main" in original
    assert run(out) == original


UNREACHABLE = r"""
import importlib, json, pkgutil, sys, pkg, pkg.mod
out = {"dunder": sorted(k for k in vars(pkg.mod) if k.startswith("_"))}
out["packages"] = [i.name for i in pkgutil.walk_packages(pkg.__path__, "pkg.") if i.ispkg]
out["folders"] = [i.name for i in pkgutil.iter_modules([sys.argv[1]])]
try:
    importlib.import_module("pkg.mod." + sys.argv[2])
except ImportError as exc:
    out["error"] = type(exc).__name__
print(json.dumps(out))
"""


def test_module_namespace_holds_no_helper_name_and_decoys_are_unreachable(masked):
    _, out, report = masked
    decoy = Path(next(e["visible_path"] for e in entries(report, "decoy") if e["owner"] == "pkg/mod.py"))
    seen = json.loads(run_py(out, UNREACHABLE, str(out / decoy.parent), decoy.stem).stdout)
    dunders = ["__builtins__", "__cached__", "__doc__", "__file__", "__loader__", "__name__", "__package__", "__spec__"]
    assert seen["dunder"] == [*dunders, "_scale"]  # `_scale` is the module's own import alias
    assert seen["packages"] == ["pkg.sub"]  # no masked module reads as a package
    assert len(seen["folders"]) == 3  # only a caller pointing pkgutil *into* the decoy folder sees decoys
    assert seen["error"] == "ModuleNotFoundError"


RECORDER = r"""
import json, os, sys
opened, names = set(), set()
def audit(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].endswith(".py"):
        opened.add(os.path.realpath(args[0]))
    elif event == "import":
        names.add(args[0])
sys.addaudithook(audit)
class Recorder:
    def find_spec(self, name, path=None, target=None):
        names.add(name)
sys.meta_path.insert(0, Recorder())
def dump():
    with open(os.environ["RECORD_TO"], "w") as fh:
        json.dump({"opened": sorted(opened), "names": sorted(names)}, fh)
import atexit
atexit.register(dump)
"""
EXERCISE = r"""
import importlib, pkgutil, pkg, ns.inner.leaf
for info in pkgutil.walk_packages(pkg.__path__, "pkg."):
    importlib.import_module(info.name)
import pkg.mod, pkg.user
assert pkg.mod.area(2) == 4 and pkg.user.make() == pkg.mod.Shape(2) and ns.inner.leaf.value() == "leaf"
"""
TEST_FILE = (
    "import pkg.mod\nimport pkg.sub.deep\n\n\ndef test_uses_the_masked_module():\n"
    "    assert pkg.mod.area(3) == 9 and pkg.sub.deep.go() == 9 and pkg.mod.data() == 'payload\\n'\n"
)


@pytest.mark.parametrize("scenario", ["import-and-walk", "pytest-run"])
def test_decoys_are_never_imported_nor_opened(masked, scenario: str, tmp_path: Path):
    _, out, report = masked
    root = tmp_path / "variant"
    shutil.copytree(out, root)
    record = tmp_path / "record.json"
    if scenario == "import-and-walk":
        code = RECORDER + EXERCISE
    else:
        make_tree(root, {"tests/test_masked.py": TEST_FILE})
        code = RECORDER + "import pytest\nraise SystemExit(pytest.main(['-q', '-p', 'no:cacheprovider', 'tests']))\n"
    env = {**os.environ, "RECORD_TO": str(record), "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(record.read_text())
    decoys = [root / e["visible_path"] for e in entries(report, "decoy")]
    hidden = [root / e["runtime_path"] for e in entries(report, "wrapper_module")]
    assert len(decoys) >= 15
    assert len(hidden) == 11
    assert {str(h.resolve()) for h in hidden} & set(seen["opened"])  # the hook does see module files
    assert not {str(d.resolve()) for d in decoys} & set(seen["opened"])
    stems = {d.stem for d in decoys}
    assert not [n for n in seen["names"] if set(n.split(".")) & stems]


def test_no_import_statement_or_text_names_a_decoy(masked):
    _, out, report = masked
    decoys = {e["visible_path"] for e in entries(report, "decoy")}
    stems = {Path(d).stem for d in decoys}
    for path in out.rglob("*.py"):
        rel = path.relative_to(out).as_posix()
        text = path.read_text()
        if rel in decoys:
            continue
        assert not [s for s in stems if s in text], rel
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not {part for n in names for part in n.split(".")} & stems, rel


def test_decoys_differ_from_the_implementation_and_record_their_mutations(masked):
    _, out, report = masked
    by_owner: dict[str, list[dict]] = {}
    for entry in entries(report, "decoy"):
        by_owner.setdefault(entry["owner"], []).append(entry)
    hidden = {e["visible_path"]: e["runtime_path"] for e in entries(report, "wrapper_module")}
    kinds = set()
    for owner, decoys in by_owner.items():
        real = (out / hidden[owner]).read_bytes()
        texts = [(out / d["visible_path"]).read_bytes() for d in decoys]
        assert len(set(texts)) == len(texts)
        assert real not in texts
        for d in decoys:
            assert d["mutations"]
            assert d["runtime_path"] == "never imported"
            assert Path(d["visible_path"]).parent.as_posix() == owner.removesuffix(".py")
            kinds |= {m.split()[0] for m in d["mutations"]}
    assert {"invert-if", "swap-imports", "drop-function"} <= kinds
    mod_decoys = [(out / d["visible_path"]).read_text() for d in by_owner["pkg/mod.py"]]
    assert all('"""Only a docstring."""' in text for text in mod_decoys)  # docstrings are never stripped


RUN_BY_PATH = {
    "pkg/__init__.py": "",
    "pkg/tool.py": (
        '"""A tool its tests run by path, as tabulate\'s run tabulate/__init__.py."""\n'
        "import sys\n\nLIMIT = 3\n\n\ndef count(words):\n    if len(words) > LIMIT:\n        return LIMIT\n"
        "    return len(words)\n\n\ndef main(argv):\n    total = count(argv)\n    if total == 0:\n"
        '        raise SystemExit("no words")\n'
        "    print(__name__, __spec__, __package__, total, __doc__.split()[0])\n\n\n"
        'if __name__ == "__main__":\n    main(sys.argv[1:])\n'
    ),
}


@pytest.mark.parametrize(
    "runner", [["pkg/tool.py"], ["-c", "import runpy; runpy.run_path('pkg/tool.py', None, '__main__')"]]
)
@pytest.mark.parametrize("args", [["a", "b"], ["a", "b", "c", "d"], []])
def test_a_masked_module_run_by_path_behaves_as_before(tmp_path: Path, runner: list[str], args: list[str]):
    """By path a module has no spec: the forwarder runs the hidden code as that script (it had raised AttributeError
    on ``__spec__.name``), with the original's name, package, docstring, arguments and exit."""
    src = make_tree(tmp_path / "src", RUN_BY_PATH)
    report = mask(src, tmp_path / "out")
    assert {o.file for o in report.outcomes if isinstance(o, Applied)} == {"pkg/tool.py"}

    def run(root: Path) -> tuple[int, str, list[str]]:
        proc = subprocess.run([sys.executable, *runner, *args], cwd=root, capture_output=True, text=True, timeout=60)
        return proc.returncode, proc.stdout, proc.stderr.splitlines()[-1:]

    original = run(src)
    assert original[0] == (1 if not args else 0), original
    assert run(tmp_path / "out") == original
