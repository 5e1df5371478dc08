"""proxy-imports: golden trees, behaviour of variants in fresh interpreters, bad input, determinism.

Behaviour tests run the *variant* in a subprocess (``python -c``) and, where the question is
"nothing changed", the original too, comparing what both print. The differential tests on
real projects live in `test_proxy_imports_real.py`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.tree import ApplyConfig, TreeReport, apply_tree
from tests.support.trees import make_tree

TREES = Path(__file__).parent / "trees" / "proxy-imports"
ID = "proxy-imports"


def proxy(
    src: Path, out: Path, seed: int = 0, fraction: float = 1.0, include_build: bool = False, **options
) -> TreeReport:
    config = ApplyConfig(
        [ID], fraction=fraction, seed=seed, options={ID: options}, check_interpreters=False, include_build=include_build
    )
    report = apply_tree(src, out, config)
    assert not [o for o in report.outcomes if isinstance(o, Failed)]
    return report


def run_py(root: Path, code: str, *, check: bool = True) -> str:
    """Run `code` in a fresh interpreter with `root` as its working directory and only sys.path entry."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc.stdout


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def generated(report: TreeReport) -> set[str]:
    """Stems of every proxy module the transform created."""
    return {Path(p).stem for entry in report.resolution for p in entry["chain"].split(" -> ")}


def skip_reasons(report: TreeReport) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for o in report.outcomes:
        if isinstance(o, Skipped):
            found.setdefault(o.file, []).append(o.reason)
    return found


# --- golden trees -------------------------------------------------------------------------------


def _golden_cases():
    return [pytest.param(case, id=case.name) for case in sorted(TREES.iterdir()) if case.is_dir()]


def _read_txt_tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix().removesuffix(".txt"): p.read_bytes() for p in folder.rglob("*.txt")}


@pytest.mark.parametrize("case", _golden_cases())
def test_golden_tree(case: Path, tmp_path: Path):
    spec = yaml.safe_load((case / "case.yaml").read_text())
    src = make_tree(tmp_path / "src", _read_txt_tree(case / "before"))
    include_build = spec.get("include_build", False)
    report = proxy(src, tmp_path / "out", seed=spec["seed"], include_build=include_build, **spec.get("options", {}))
    after = snapshot(tmp_path / "out")
    if os.environ.get("REPOANCHOR_REGEN_GOLDEN") == "1":  # maintainers: regenerate, then review the diff
        shutil.rmtree(case / "after", ignore_errors=True)
        for rel, data in after.items():
            make_tree(case / "after", {f"{rel}.txt": data})
    assert after == _read_txt_tree(case / "after")
    reasons = [r for rs in skip_reasons(report).values() for r in rs]
    for expected in spec.get("skipped", []):
        assert any(r.startswith(expected) for r in reasons), reasons
    # The golden variant must behave: every changed module still imports.
    for rel in report.changed_files:
        if rel.startswith("pkg/") and not Path(rel).stem.startswith("_"):
            run_py(tmp_path / "out", f"import {rel.removesuffix('.py').replace('/', '.')}")


# --- behaviour in a fresh interpreter ---------------------------------------------------------------

PACKAGE = {
    "pkg/__init__.py": "from . import mod, opt\nfrom .mod import helper, json\n__all__ = ['helper', 'json']\n",
    "pkg/mod.py": (
        "import os\nimport json\nfrom os import path as ospath\n\n"
        "def cwd():\n    return os.getcwd()\n\n"
        "def helper():\n    import sidefx\n    return sidefx.VALUE\n\n"
        "if False:\n    import never_imported_xyz\n"
    ),
    "pkg/opt.py": (
        "try:\n    import not_installed_dep_xyz as dep\nexcept ImportError as exc:\n"
        "    dep, MISSING = None, exc.name\n"
        "try:\n    from .nothing_here import value\nexcept ImportError:\n    value = 'fallback'\n"
        "try:\n    import json\nexcept ImportError:\n    json = None\n"
    ),
    "pkg/a.py": "from . import b\nA = 'a'\n\ndef f():\n    return b.B\n",
    "pkg/b.py": "from . import a\nB = 'b'\n\ndef g():\n    return a.A\n",
    "pkg/c.py": "from .d import D\nC = 'c'\n",
    "pkg/d.py": "from .c import C\nD = 'd'\n",
    "pkg/reads_file.py": "import pathlib\nDATA = pathlib.Path(__file__).with_name('data.txt').read_text()\n",
    "pkg/data.txt": "payload\n",
    "sidefx.py": "print('SIDE EFFECT')\nVALUE = 7\n",
}


@pytest.fixture(scope="module")
def variant(tmp_path_factory) -> tuple[Path, Path, TreeReport]:
    base = tmp_path_factory.mktemp("proxy")
    src = make_tree(base / "src", PACKAGE)
    report = proxy(src, base / "out", seed=7)
    return src, base / "out", report


def test_every_package_module_is_proxied_and_names_are_unchanged(variant):
    src, out, report = variant
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert {"pkg/__init__.py", "pkg/mod.py", "pkg/opt.py", "pkg/a.py", "pkg/b.py", "pkg/c.py"} <= applied
    assert not (out / "pkg/mod.py").read_text().startswith("import os\n")
    code = "import pkg.mod as m, os, json\nprint(m.os is os, m.json is json, m.ospath is os.path)"
    assert run_py(out, code).split() == ["True", "True", "True"]


def test_optional_dependency_that_is_missing_stays_optional(variant):
    _, out, _ = variant
    code = "import pkg.opt as o\nprint(o.dep, o.MISSING, o.value, o.json is __import__('json'))"
    assert run_py(out, code).split() == ["None", "not_installed_dep_xyz", "fallback", "True"]
    # A dependency made missing at run time (sys.modules[name] = None) is seen on reload too:
    # the leaf re-runs the original import each time, nothing is cached in the chain.
    code = "import importlib, sys, pkg.opt as o\nsys.modules['json'] = None\nimportlib.reload(o)\nprint(o.json)"
    assert run_py(out, code).strip() == "None"


def test_lazy_import_stays_lazy_and_importing_every_module_runs_no_import(variant):
    _, out, _ = variant
    code = (
        "import sys, pkg\nprint('sidefx' in sys.modules)\nprint(pkg.helper())\nprint('sidefx' in sys.modules)\n"
        "print('never_imported_xyz' in sys.modules)"
    )
    assert run_py(out, code).split() == ["False", "SIDE", "EFFECT", "7", "True", "False"]
    # A package walker importing every module (proxies included) triggers no proxied import.
    walk = (
        "import importlib, pkgutil, sys, pkg\nfailed = []\n"
        "for info in pkgutil.iter_modules(pkg.__path__, 'pkg.'):\n"
        "    try:\n        importlib.import_module(info.name)\n"
        "    except ImportError:\n        failed.append(info.name)\n"
        "print('sidefx' in sys.modules, 'not_installed_dep_xyz' in sys.modules, sorted(failed))"
    )
    assert run_py(out, walk).split() == ["False", "False", "['pkg.c',", "'pkg.d']"]


def test_mock_patch_reexport_and_all_work_on_the_variant(variant):
    _, out, _ = variant
    code = (
        "from unittest import mock\nimport pkg.mod\n"
        "with mock.patch('pkg.mod.os') as fake:\n    print(pkg.mod.cwd() is fake.getcwd.return_value)\n"
        "from pkg.mod import json\nimport json as real\nprint(json is real)\n"
        "ns = {}\nexec('from pkg import *', ns)\nprint(sorted(k for k in ns if not k.startswith('__')))"
    )
    assert run_py(out, code).split() == ["True", "True", "['helper',", "'json']"]


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("import pkg.a as a, pkg.b as b\nprint(a.f(), b.g())", id="cycle-a-first"),
        pytest.param("import pkg.b as b, pkg.a as a\nprint(a.f(), b.g())", id="cycle-b-first"),
        pytest.param(
            "try:\n    import pkg.c\nexcept ImportError as exc:\n    print(type(exc).__name__, exc.name)",
            id="cycle-that-fails",
        ),
        pytest.param(
            "import pkg.reads_file as r\nprint(r.DATA.strip(), r.__file__.endswith('reads_file.py'))",
            id="reads-own-file",
        ),
    ],
)
def test_circular_imports_and_file_reads_behave_as_in_the_original(variant, code: str):
    src, out, _ = variant
    assert run_py(out, code) == run_py(src, code)
    assert run_py(out, code).strip()


def test_init_target_keeps_relative_imports_and_metadata_names_chains(variant):
    src, out, report = variant
    init = (out / "pkg/__init__.py").read_text()
    assert "from . import mod" not in init
    assert "from ._" in init
    assert run_py(out, "import pkg\nprint(pkg.mod.__name__, pkg.opt.__name__)").split() == ["pkg.mod", "pkg.opt"]
    entries = [e for e in report.resolution if e["visible_path"] == "pkg/__init__.py"]
    assert {e["imported"] for e in entries} == {"from . import mod, opt", "from .mod import helper, json"}
    for entry in entries:
        chain = entry["chain"].split(" -> ")
        assert entry["kind"] == "import_proxy"
        assert entry["runtime_path"] == chain[-1]
        assert all(p.startswith("pkg/_") and (out / p).is_file() for p in chain)


# --- options: depth and fan-out ---------------------------------------------------------------------

STATEMENTS = {
    "pkg/__init__.py": "",
    "pkg/m.py": "import os\nfrom collections import OrderedDict, deque, defaultdict, Counter, ChainMap\n",
}


@pytest.mark.parametrize(
    ("depth", "fanout", "chains"), [(1, 1, [1, 1]), (4, 2, [1, 2]), (3, 3, [1, 3]), (6, 9, [1, 5])]
)
def test_depth_and_fanout_options_are_honoured(tmp_path: Path, depth: int, fanout: int, chains: list[int]):
    src = make_tree(tmp_path / "src", STATEMENTS)
    report = proxy(src, tmp_path / "out", depth=depth, fanout=fanout)
    per_statement: dict[str, list[list[str]]] = {}
    for entry in report.resolution:
        per_statement.setdefault(entry["imported"], []).append(entry["names"].split(", "))
    assert [len(per_statement[k]) for k in ("import os", STATEMENTS["pkg/m.py"].splitlines()[1])] == chains
    # Contiguous groups in the original order: binding order (and partial binding on failure) is kept.
    names = [n for group in per_statement[STATEMENTS["pkg/m.py"].splitlines()[1]] for n in group]
    assert names == ["OrderedDict", "deque", "defaultdict", "Counter", "ChainMap"]
    assert all(len(e["chain"].split(" -> ")) == depth for e in report.resolution)
    assert len(list((tmp_path / "out/pkg").glob("_[!_]*.py"))) == depth * sum(chains)
    code = "import pkg.m as m, collections as c\nprint(m.deque is c.deque, m.ChainMap is c.ChainMap, m.os.sep)"
    assert run_py(tmp_path / "out", code).split() == ["True", "True", "/"]


@pytest.mark.parametrize("options", [{"depth": 0}, {"fanout": "2"}, {"depth": True}, {"width": 3}])
def test_bad_options_are_configuration_errors(tmp_path: Path, options: dict):
    src = make_tree(tmp_path / "src", STATEMENTS)
    with pytest.raises(ValueError, match="proxy-imports"):
        apply_tree(src, tmp_path / "out", ApplyConfig([ID], options={ID: options}))
    assert not (tmp_path / "out").exists()


def test_fraction_rewrites_a_share_of_the_statements(tmp_path: Path):
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/m.py": "".join(f"import m{i}\n" for i in range(10))})
    report = proxy(src, tmp_path / "out", fraction=0.3)
    assert len(report.resolution) == 3


# --- determinism and names ----------------------------------------------------------------------------


def test_same_seed_is_byte_identical_and_different_seeds_share_no_generated_name(tmp_path: Path):
    src = make_tree(tmp_path / "src", PACKAGE)
    reports = {}
    for name, seed in [("a", 1), ("b", 1), ("c", 2), ("d", 3)]:
        reports[name] = proxy(src, tmp_path / name, seed=seed)
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    assert json.dumps(reports["a"].resolution) == json.dumps(reports["b"].resolution)
    names = {k: generated(r) for k, r in reports.items()}
    assert len(names["a"]) >= 40
    for x, y in [("a", "c"), ("a", "d"), ("c", "d")]:
        assert not names[x] & names[y]
    for stems in names.values():  # plausible, private, no shared marker beyond the underscore
        assert all(s.startswith("_") and s.count("_") == 3 and s[1:].replace("_", "").isalpha() for s in stems)
        assert len({s.split("_")[1] for s in stems}) > 10


def test_generated_names_do_not_clobber_package_attributes_or_existing_files(tmp_path: Path, monkeypatch):
    from repoanchor.perturb.mirage.proxy import names as proxy_names

    # A vocabulary of one triple (two orders): the first draw must dodge the __init__ global.
    monkeypatch.setattr(proxy_names, "QUALIFIERS", ("lazy", "io"))
    monkeypatch.setattr(proxy_names, "NOUNS", ("loaders",))
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "_lazy_io_loaders = 1\n", "pkg/m.py": "import os\n"})
    proxy(src, tmp_path / "out", depth=1)
    assert (tmp_path / "out/pkg/_io_lazy_loaders.py").is_file()
    assert run_py(tmp_path / "out", "import pkg, pkg.m\nprint(pkg._lazy_io_loaders)").strip() == "1"


# --- bad input and refused modules --------------------------------------------------------------------

MAIN_PRINTS = "\nif __name__ == '__main__':\n    print(os.sep)\n"
BAD = {
    "pkg/__init__.py": "",
    "pkg/broken.py": "import os\ndef f(:\n    pass\n",
    "pkg/py2.py": 'import os\nprint "hello"\n',
    "pkg/latin.py": b"import os\ns = '\xe9t\xe9'\n",
    "pkg/declared.py": b"# -*- coding: latin-1 -*-\nimport os\ns = '\xe9t\xe9'\n",
    "pkg/empty.py": "",
    "pkg/huge.py": "import os\n" + "x = 1\n" * 400_000,
    "pkg/star.py": "from os.path import *\n",
    "pkg/script.py": "import os\n\nif __name__ == '__main__':\n    print(os.sep)\n",
    "pkg/script_in_pkg.py": "import os\nfrom . import star\n\nif __name__ == '__main__':\n    print(os.sep)\n",
    "pkg/script_doc.py": '"""Use:\n    from . import x\n"""\nimport os\n\nif "__main__" == __name__:\n    pass\n',
    # tabulate's __init__: a relative import whose failure is caught was written to run as a script too
    "pkg/script_caught.py": "import os\ntry:\n    from . import star\nexcept ImportError:\n    pass\n" + MAIN_PRINTS,
    "pkg/script_typing.py": "import os\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import star\n"
    + MAIN_PRINTS,
    "pkg/script_tried.py": "import os\ntry:\n    from . import star\nexcept (ValueError, KeyError):\n    pass\n"
    + MAIN_PRINTS,
    "pkg/identity.py": "import os\n__package__ = 'elsewhere'\n",
    "rebound/__init__.py": "import os\n__path__ = [os.path.dirname(__file__)]\n",
    "rebound/m.py": "import os\n",
    "extended/__init__.py": "from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n",
    "nspkg/rel.py": "from . import plain\nimport os\n",
    "nspkg/plain.py": "import os\n",
    "scripts/tool.py": "import os\n",
    "setup.py": "import os\n",
    "single.py": "import os\n",
}


def test_bad_input_is_refused_with_reasons_and_good_files_still_work(tmp_path: Path):
    src = make_tree(tmp_path / "src", BAD)
    (src / "pkg/link.py").symlink_to("declared.py")
    report = proxy(src, tmp_path / "out", include_build=True)  # setup.py: the transform's own refusal
    reasons = {file: " | ".join(rs) for file, rs in skip_reasons(report).items()}
    expected = {
        "pkg/broken.py": "unparseable",
        "pkg/py2.py": "unparseable",
        "pkg/latin.py": "undecodable",
        "pkg/empty.py": "empty",
        "pkg/huge.py": "too large",
        "pkg/star.py": "star-import",
        "pkg/script.py": "script-module",
        "pkg/script_doc.py": "script-module",  # a relative import in a docstring proves nothing
        "pkg/script_caught.py": "script-module",
        "pkg/script_typing.py": "script-module",
        "pkg/identity.py": "module-identity-rebound",
        "rebound/m.py": "package-path-rebound",
        "nspkg/plain.py": "not-importable",
        "scripts/tool.py": "not-importable",
        "setup.py": "script-module",
    }
    for file, reason in expected.items():
        assert reason in reasons.get(file, ""), (file, reasons.get(file))
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    proven = {"pkg/script_in_pkg.py", "pkg/script_tried.py"}  # their relative imports run, or the module fails
    assert applied == {"pkg/declared.py", *proven, "extended/__init__.py", "nspkg/rel.py", "single.py"}
    out = tmp_path / "out"
    assert (out / "pkg/link.py").is_symlink()
    declared = (out / "pkg/declared.py").read_bytes()
    assert declared.endswith(b"s = '\xe9t\xe9'\n")  # written back in its declared latin-1
    assert b"\nimport os\n" not in declared
    code = (
        "import pkg.declared as d, nspkg.rel as r, single, extended, os\n"
        "print(d.s == '\\xe9t\\xe9', r.os is os, single.os is os)"
    )
    assert run_py(out, code).split() == ["True", "True", "True"]
    script = subprocess.run([sys.executable, "pkg/script_caught.py"], cwd=out, capture_output=True, text=True)
    assert (script.returncode, script.stdout) == (0, os.sep + "\n"), script.stderr  # as a script, outside its package


def test_a_tree_root_that_is_a_package_needs_relative_imports_as_proof(tmp_path: Path):
    files = {"__init__.py": "", "m.py": "import os\n", "r.py": "from . import m\nimport os\n"}
    report = proxy(make_tree(tmp_path / "src", files), tmp_path / "out")
    assert any("ambiguous-package" in r for r in skip_reasons(report)["m.py"])
    assert {o.file for o in report.outcomes if isinstance(o, Applied)} == {"r.py"}


def test_old_python_projects_are_refused(tmp_path: Path):
    src = make_tree(
        tmp_path / "src", {"pyproject.toml": '[project]\nrequires-python = ">=3.6"\n', "m.py": "import os\n"}
    )
    report = proxy(src, tmp_path / "out")
    assert any("unsupported-python" in r for r in skip_reasons(report)["m.py"])
    assert snapshot(tmp_path / "out") == snapshot(src)


def test_the_interpreter_a_variant_runs_under_overrides_the_declared_minimum(tmp_path: Path):
    """A suite task only runs in its instance's environment (pytest 5 declares 3.5; SWE-bench runs it on 3.9)."""
    files = {"pyproject.toml": '[project]\nrequires-python = ">=3.5"\n', "pkg/__init__.py": ""}
    files["pkg/m.py"] = "import os\n"
    src = make_tree(tmp_path / "src", files)
    config = ApplyConfig([ID], fraction=1.0, check_interpreters=False, python="3.9")
    report = apply_tree(src, tmp_path / "out", config)
    assert report.project.min_python == (3, 9)
    assert "pkg/m.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}


def test_top_level_modules_listed_as_py_modules_are_refused(tmp_path: Path):
    files = {"setup.cfg": "[options]\npy_modules = single\n", "single.py": "import os\n"}
    report = proxy(make_tree(tmp_path / "src", files), tmp_path / "out")
    assert any("installed-module" in r for r in skip_reasons(report)["single.py"])


def test_failed_transaction_is_rolled_back(tmp_path: Path, monkeypatch):
    from repoanchor.perturb.mirage.proxy import transform as proxy_imports

    monkeypatch.setattr(proxy_imports, "leaf_source", lambda bindings, rng: "def broken(:\n")
    src = make_tree(tmp_path / "src", STATEMENTS)
    report = apply_tree(src, tmp_path / "out", ApplyConfig([ID], fraction=1.0, check_interpreters=False))
    assert [o.file for o in report.outcomes if isinstance(o, Failed)] == ["pkg/m.py"]
    assert snapshot(tmp_path / "out") == snapshot(src)
    assert not report.resolution


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("from __future__ import annotations\n", "future-import"),
        ("from os.path import *\n", "star-import"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import os\n", "type-checking-only"),
        ("import t\nif t.TYPE_CHECKING:\n    import os\nelse:\n    import sys\n", "type-checking-only"),
        ("from x import __doc__\n", "reserved-name"),
        ("from x import AttributeError\n", "reserved-name"),
        ("from x import __ne__\n", "reserved-name"),
        ("from x import __getstate__\n", "reserved-name"),
        ("import os, os.path\n", "duplicate-binding"),
        ("class A:\n    from x import __secret\n", "mangled-name"),
        ("import sys\n\n\ndef f():\n    import os\n", "call-time-import"),
    ],
)
def test_statements_that_cannot_be_forwarded_are_refused(tmp_path: Path, code: str, reason: str):
    src = make_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/m.py": code})
    report = proxy(src, tmp_path / "out")
    refused = [o for o in report.outcomes if isinstance(o, Skipped) and o.where]
    assert len(refused) == 1
    assert refused[0].reason.startswith(reason)
    assert len(report.resolution) == code.count("import ") - 1  # every other statement is proxied


def test_a_name_every_module_answers_itself_is_not_proxied(tmp_path: Path):
    """attrs' `_cmp.py` imports `_make.__ne__` for the classes it builds: through a proxy module, `from proxy import
    __ne__` got the proxy module's own bound `object.__ne__` (module `__getattr__` runs only for missing names), and
    `C(1) != C(1)` came out True."""
    files = {
        "pkg/__init__.py": "",
        "pkg/_make.py": "def __ne__(self, other):\n    return not self.__eq__(other)\n",
        "pkg/_cmp.py": (
            "import functools\nfrom ._make import __ne__\n\n\nclass C:\n    __ne__ = __ne__\n\n"
            "    def __init__(self, v):\n        self.v = v\n\n"
            "    def __eq__(self, other):\n        return self.v == other.v\n"
        ),
    }
    src = make_tree(tmp_path / "src", files)
    report = proxy(src, tmp_path / "out")
    code = "from pkg._cmp import C\nprint(C(1) != C(1), C(1) != C(2))"
    assert run_py(tmp_path / "out", code) == run_py(src, code) == "False True\n"
    assert [e["imported"] for e in report.resolution] == ["import functools"]  # the other statement still proxied


def test_a_function_level_import_runs_as_in_the_original_under_a_patched_import_state(tmp_path: Path):
    """astroid's raw_building imports logging inside a function that its test calls with `sys.modules` patched; a
    proxy chain there would import new modules at that call, through importlib's Python code, and fail inside."""
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": (
            "import sys\n\n\ndef logger_name():\n    import logging\n    return logging.getLogger('x').name\n"
        ),
    }
    src = make_tree(tmp_path / "src", files)
    report = proxy(src, tmp_path / "out")
    assert any(r.startswith("call-time-import") for r in skip_reasons(report)["pkg/mod.py"])
    code = (
        "from unittest import mock\nimport pkg.mod\n"
        "with mock.patch('pkg.mod.sys.modules') as modules:\n"
        "    modules.__getitem__.side_effect = KeyError\n"
        "    try:\n        print(pkg.mod.logger_name())\n"
        "    except Exception as exc:\n        print(type(exc).__name__)\n"
    )
    assert run_py(tmp_path / "out", code) == run_py(src, code) == "x\n"


def test_relative_import_in_a_top_level_module_is_refused(tmp_path: Path):
    # Only a relative import that runs on import proves a package; one in a function does not.
    files = {"single.py": "import os\n\ndef f():\n    from . import x\n"}
    report = proxy(make_tree(tmp_path / "src", files), tmp_path / "out")
    assert any(r.startswith("invalid-relative") for r in skip_reasons(report)["single.py"])
    assert "    from . import x\n" in (tmp_path / "out/single.py").read_text()


TABULATE_LIKE = (
    "import os\nimport re\ntry:\n    from .version import version\nexcept ImportError:\n    version = 'unknown'\n\n\n"
    "def main():\n    print(re.escape(os.sep), version)\n\n\nif __name__ == '__main__':\n    main()\n"
)


def test_a_script_stays_refused_when_the_file_passes_rewrote_its_main_guard_first(tmp_path: Path):
    """In tabulate's all-17 row, string-split had made ``'__main__'`` into ``('__mai' + 'n__')`` before the proxies
    looked for the guard: they routed the imports of ``tabulate/__init__.py`` and ``python tabulate/__init__.py``
    failed. The guard's string is no longer split."""
    src = make_tree(tmp_path / "src", {"tool/__init__.py": TABULATE_LIKE})
    config = ApplyConfig(["string-split", ID], fraction=1.0, check_interpreters=False)
    report = apply_tree(src, tmp_path / "out", config)
    assert any("script-module" in reason for reason in skip_reasons(report)["tool/__init__.py"])
    assert "'__main__'" in (tmp_path / "out/tool/__init__.py").read_text()

    def run(root: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "tool/__init__.py"], cwd=root, capture_output=True, text=True)

    assert run(tmp_path / "out").stdout == run(src).stdout == f"{re.escape(os.sep)} unknown\n"
