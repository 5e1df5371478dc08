"""runtime-target-masking: golden trees, bad input, script and file uses, threads, options, determinism.

Behaviour of variants in fresh interpreters (the public module is the hidden file, decoys are
never imported) is in `test_runtime_target_masking_behaviour.py`; the differential tests on
real projects in `test_runtime_target_masking_real.py`.
"""

from __future__ import annotations

import ast
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
import yaml

from repoanchor.perturb.mirage.masking.decoys import make_decoys
from repoanchor.perturb.results import Applied
from repoanchor.perturb.speed.emission import FileEmission
from repoanchor.perturb.tree import ApplyConfig, TreeReport, apply_tree
from tests.support.masking import ID, PACKAGE, entries, mask, reasons, run_py, snapshot
from tests.support.trees import make_tree

TREES = Path(__file__).parent / "trees" / "runtime-target-masking"

# --- golden trees -------------------------------------------------------------------------------


def _read_txt_tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix().removesuffix(".txt"): p.read_bytes() for p in folder.rglob("*.txt")}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in sorted(TREES.iterdir()) if c.is_dir()])
def test_golden_tree(case: Path, tmp_path: Path):
    spec = yaml.safe_load((case / "case.yaml").read_text())
    src = make_tree(tmp_path / "src", _read_txt_tree(case / "before"))
    report = mask(src, tmp_path / "out", seed=spec["seed"], **spec.get("options", {}))
    after = snapshot(tmp_path / "out")
    if os.environ.get("REPOANCHOR_REGEN_GOLDEN") == "1":  # maintainers: regenerate, then review the diff
        shutil.rmtree(case / "after", ignore_errors=True)
        make_tree(case / "after", {f"{rel}.txt": data for rel, data in after.items()})
    assert after == _read_txt_tree(case / "after")
    found = [r for rs in reasons(report).values() for r in rs]
    for expected in spec.get("skipped", []):
        assert any(r.startswith(expected) for r in found), (expected, found)
    for entry in entries(report, "wrapper_module"):  # every masked module still imports
        dotted = entry["visible_path"].removesuffix(".py").replace("/", ".")
        run_py(tmp_path / "out", f"import {dotted}")


# --- bad input --------------------------------------------------------------------------------------

BAD = {
    "pkg/__init__.py": "",
    "pkg/ok.py": "def f(x):\n    if x:\n        return 1\n    return 2\n",
    "pkg/broken.py": "def f(:\n    pass\n",
    "pkg/py2.py": 'print "hello"\nexec "x = 1"\n',
    "pkg/latin.py": b"# -*- coding: latin-1 -*-\nS = '\xe9t\xe9'\nif S:\n    pass\n",
    "pkg/bad_bytes.py": b"S = '\xe9t\xe9'\nif S:\n    pass\n",
    "pkg/nul.py": b"x = 1\x00\n",
    "pkg/empty.py": "",
    "pkg/huge.py": "".join(f"def f{i}(a):\n    return a if a else {i}\n" for i in range(90_000)),
    "pkg/star_user.py": (
        "from os.path import *\nfrom .ok import *\n\ndef j(a):\n    if a:\n        return join(a, 'x')\n"
    ),
    "pkg/__main__.py": "from .ok import f\nif f(1):\n    pass\n",
    "flat.py": "def top():\n    if 1:\n        return 0\n",
    "ns_only/mod.py": "def n():\n    if 1:\n        return 0\n",
}


def test_bad_input_is_refused_with_reasons_and_nothing_outside_out_is_written(tmp_path: Path):
    src = make_tree(tmp_path / "src", BAD)
    outside = make_tree(tmp_path / "outside", {"evil.py": "def e():\n    if 1:\n        return 0\n"})
    (src / "pkg" / "link.py").symlink_to(outside / "evil.py")
    (src / "pkg" / "alias.py").symlink_to("ok.py")
    before = snapshot(tmp_path)
    report = mask(src, tmp_path / "out")
    assert {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("out/")} == before
    got = {file: [r.split(":")[0] for r in rs] for file, rs in reasons(report).items()}
    expected = {
        "pkg/__init__.py": "package-init",
        "pkg/ok.py": "symlink",  # pkg/alias.py points at it and would dangle
        "pkg/broken.py": "unparseable",
        "pkg/py2.py": "unparseable",
        "pkg/bad_bytes.py": "undecodable",
        "pkg/nul.py": "binary",
        "pkg/empty.py": "empty",
        "pkg/__main__.py": "script-module",
        "pkg/huge.py": "too large",
        "flat.py": "no-package",
        "ns_only/mod.py": "no-package",
    }
    for file, reason in expected.items():
        assert reason in got.get(file, []), (file, got.get(file))
    assert {s.file: s.reason.split(":")[0] for s in report.file_skips}["pkg/link.py"] == "symlink"
    assert (tmp_path / "out" / "pkg" / "link.py").is_symlink()
    assert (tmp_path / "out" / "pkg" / "alias.py").is_file()
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert applied == {"pkg/latin.py", "pkg/star_user.py"}
    hidden = next(e["runtime_path"] for e in report.resolution if e["visible_path"] == "pkg/latin.py")
    assert (tmp_path / "out" / hidden).read_bytes() == BAD["pkg/latin.py"]  # moved byte for byte
    code = "import pkg.latin, pkg.star_user; print(pkg.latin.S == '\\xe9t\\xe9', pkg.star_user.j('a'))"
    assert run_py(tmp_path / "out", code).stdout.split() == ["True", "a/x"]


def test_script_and_file_uses_are_detected_from_project_text(tmp_path: Path):
    src = make_tree(
        tmp_path / "src",
        {
            "pkg/__init__.py": "",
            "pkg/cli.py": "def main():\n    if 1:\n        return 0\n\nif __name__ == '__main__':\n    main()\n",
            "pkg/kept.py": "def main():\n    if 1:\n        return 0\n\nif __name__ == '__main__':\n    main()\n",
            "pkg/tool.py": "#!/usr/bin/env python\nif 1:\n    pass\n",
            "pkg/read.py": "def r():\n    if 1:\n        return 0\n",
            "pkg/linked.py": "def r():\n    if 1:\n        return 0\n",
            "tests/test_cli.py": "import runpy\nrunpy.run_module('pkg.cli')\nopen('src/pkg/read.py')\n",
            "README.md": "See https://example.org/blob/main/pkg/linked.py for details.\n",
        },
    )
    report = mask(src, tmp_path / "out")
    got = {file: rs[0].split(":")[0] for file, rs in reasons(report).items()}
    assert got == {"pkg/__init__.py": "package-init", "pkg/tool.py": "script-module", "pkg/read.py": "path-referenced"}
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert applied == {"pkg/cli.py", "pkg/kept.py", "pkg/linked.py"}  # -m/runpy runs, main guards, forge URLs
    code = (
        "import runpy, pkg.kept; print(pkg.kept.main(), runpy.run_module('pkg.cli', run_name='__main__')['__name__'])"
    )
    assert run_py(tmp_path / "out", code).stdout.split() == ["0", "__main__"]


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("pytest.ini", "[pytest]\naddopts = --doctest-modules\n"),
        ("pytest.toml", '[pytest]\naddopts = ["--doctest-modules"]\n'),  # pytest 9's own TOML
        ("pyproject.toml", '[project]\nname = "pkg"\n\n[tool.pytest]\naddopts = ["--doctest-modules"]\n'),
    ],
)
@pytest.mark.parametrize("collection", ["any-config", "pytest-options"])
def test_doctest_collection_config_refuses_every_module(tmp_path: Path, name: str, config: str, collection: str):
    files = {"pkg/__init__.py": "", "pkg/m.py": "def f():\n    if 1:\n        return 0\n"}
    src = make_tree(tmp_path / "src", {**files, name: config})
    report = mask(src, tmp_path / "out", collection=collection)
    assert reasons(report)["pkg/m.py"][0].startswith(f"doctest-collection: {name}")


# --- threads -------------------------------------------------------------------------------------

CONCURRENT = r"""
import builtins, threading
builtins.INSIDE = threading.Event()
worker = threading.Thread(target=__import__, args=("pkg.slow",))
worker.start()
builtins.INSIDE.wait()  # the worker is now inside the module body, whatever the machine's load
import pkg.slow
print(pkg.slow.READY)
worker.join()
"""


def test_a_second_thread_waits_for_the_module_like_the_import_system_makes_it(tmp_path: Path):
    slow = "import builtins, time\n\nif True:\n    builtins.INSIDE.set()\n    time.sleep(1.0)\nREADY = 'ready'\n"
    files = {"pkg/__init__.py": "", "pkg/slow.py": slow}
    src = make_tree(tmp_path / "src", files)
    mask(src, tmp_path / "out")
    assert run_py(src, CONCURRENT).stdout == run_py(tmp_path / "out", CONCURRENT).stdout == "ready\n"


# --- options and determinism ------------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1, 5])
def test_decoy_count_option(count: int, tmp_path: Path):
    src = make_tree(
        tmp_path / "src",
        {rel: PACKAGE[rel] for rel in ("pkg/__init__.py", "pkg/mod.py", "pkg/helpers.py", "pkg/data.txt")},
    )
    report = mask(src, tmp_path / "out", decoys=count)
    owners = [e["owner"] for e in entries(report, "decoy")]
    assert owners.count("pkg/mod.py") == count
    folder = tmp_path / "out" / "pkg" / "mod"
    assert (len(list(folder.iterdir())) if count else folder.exists()) == count


@pytest.mark.parametrize("bad", [-1, 21, "many", 2.5, True])
def test_invalid_decoy_option_is_an_error(bad, tmp_path: Path):
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/m.py": "X = 1\n"})
    with pytest.raises(ValueError, match="decoys"):
        apply_tree(src, tmp_path / "out", ApplyConfig([ID], options={ID: {"decoys": bad}}, check_interpreters=False))
    assert not (tmp_path / "out").exists()


def _generated_names(report: TreeReport, out: Path) -> set[str]:
    names = set()
    for entry in report.resolution:
        names.add(Path(entry["visible_path" if entry["kind"] == "decoy" else "runtime_path"]).stem)
        if entry["kind"] == "wrapper_module":
            for node in ast.walk(ast.parse((out / entry["visible_path"]).read_text())):
                if isinstance(node, ast.FunctionDef):
                    names.add(node.name)
                elif isinstance(node, ast.arg):
                    names.add(node.arg)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return names


def test_same_seed_is_byte_identical_and_two_seeds_share_no_generated_name(tmp_path: Path):
    src = make_tree(tmp_path / "src", PACKAGE)
    runs = {}
    for label, seed in (("a", 7), ("b", 7), ("c", 8)):
        report = mask(src, tmp_path / label, seed=seed)
        runs[label] = (snapshot(tmp_path / label), report.resolution, _generated_names(report, tmp_path / label))
    assert runs["a"][:2] == runs["b"][:2]
    assert runs["a"][0] != runs["c"][0]
    assert len(runs["a"][2]) > 40
    assert not runs["a"][2] & runs["c"][2]
    taken = {p.name.split(".")[0] for p in src.rglob("*")}
    assert not runs["a"][2] & taken


# --- decoy emission ---------------------------------------------------------------------------------

SOURCES = {
    "lf": "# header\n\nimport os\n\n\ndef f(x):\n    if x:\n        return os.sep\n\n\ndef g():\n    return 1\n# end\n",
    "crlf": "import os\r\n\r\ndef f(x):\r\n    if x:\r\n        return 1\r\n\r\ndef g():\r\n    return 2\r\n",
    "no-trailing-newline": "def f(x):\n    if x:\n        return 1\n\ndef g():\n    return 2",
    "tabs-and-latin1": "# -*- coding: latin-1 -*-\ndef f(x):\n\tif x:\n\t\treturn 'é'\n\ndef g():\n\treturn 2\n",
}


@pytest.mark.parametrize("name", list(SOURCES))
def test_decoys_reemit_only_changed_statements_yet_equal_a_full_emit(name: str):
    source = SOURCES[name]
    module = cst.parse_module(source.encode("latin-1" if "latin1" in name else "utf-8"))
    assert module.code == source
    first = module.body[-1]
    dropped = module.with_changes(body=[s for s in module.body if s is not first])
    renamed = module.with_changes(body=[*module.body[:-1], first.with_changes(name=cst.Name("h"))])
    emission = FileEmission()  # as make_decoys emits each decoy: after one keeping emission of the module
    assert emission.code(module) == source
    for mutated in (dropped, renamed):
        assert emission.code(mutated, keep=False) == mutated.code
    decoys, _ = make_decoys(module, source, random.Random(name), 3)
    for decoy in decoys:  # every decoy is valid code in the module's own encoding
        assert decoy.source != module.bytes
        compile(decoy.source, name, "exec")


@pytest.mark.parametrize(
    ("config", "collection", "refused"),
    [
        ("[tox]\nenvlist = py\n\n[testenv:doctesting]\ncommands = pytest --doctest-modules\n", "any-config", True),
        ("[tox]\nenvlist = py\n\n[testenv:doctesting]\ncommands = pytest --doctest-modules\n", "pytest-options", False),
        ("[tox]\nenvlist = py\n\n[pytest]\naddopts = --doctest-modules\n", "pytest-options", True),
    ],
    ids=["tox-env-default", "tox-env-pytest-options", "pytest-section"],
)
def test_doctest_collection_option(tmp_path: Path, config: str, collection: str, refused: bool):
    """pytest's own tox.ini runs `--doctest-modules` in one tox env only: a suite (`pytest-options`) masks its
    gold modules, while a [pytest] addopts (every run collects every file) still refuses."""
    files = {"pkg/__init__.py": "", "pkg/m.py": "def f():\n    if 1:\n        return 0\n", "tox.ini": config}
    src = make_tree(tmp_path / "src", files)
    report = mask(src, tmp_path / "out", collection=collection)
    skipped = [r for r in reasons(report).get("pkg/m.py", []) if r.startswith("doctest-collection")]
    assert bool(skipped) == refused
    assert (tmp_path / "out" / "pkg" / "m").exists() != refused  # the decoy folder of a masked module


def test_an_unknown_collection_value_is_refused(tmp_path: Path):
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/m.py": "X = 1\n"})
    with pytest.raises(ValueError, match="'collection' must be one of"):
        mask(src, tmp_path / "out", collection="everything")


PLUGIN_TEST = """\
import pytest

from pkg.plugin import check


def test_the_plugins_asserts_are_rewritten():
    with pytest.raises(AssertionError) as info:
        check(3)
    assert "assert 3 == 2" in str(info.value)
"""


def test_a_module_pytests_assertion_rewriter_loads_keeps_its_rewritten_asserts(tmp_path: Path):
    """pytest-5840: `-p _pytest.pytester` loads the plugin through pytest's rewrite hook, a loader that reads the
    spec's origin and takes a config to construct; the forwarder raised TypeError building a twin of it. The hook
    must load the hidden file itself, so its asserts are rewritten exactly as the original's."""
    files = {
        "pkg/__init__.py": "",
        "pkg/plugin.py": "def check(x):\n    assert x == 2\n",
        "tests/test_p.py": PLUGIN_TEST,
    }
    src = make_tree(tmp_path / "src", files)
    report = mask(src, tmp_path / "out")
    assert "pkg/plugin.py" in {e["visible_path"] for e in entries(report, "wrapper_module")}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "pkg.plugin", "tests"]
    for tree in (src, tmp_path / "out"):
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        run = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, (tree, run.stdout[-2000:], run.stderr[-2000:])
