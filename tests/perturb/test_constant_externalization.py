"""constant-externalization: golden trees, runtime equality with exact types, one new module name,
loaders that work from any cwd / as a script / from a zip, bad input, determinism and seeds.

Golden cases live in `trees/constant-externalization/<case>/{before,after}` (Python files as
*.py.txt) with `case.json` giving seed, fraction, options and expected skip reason classes.
Set REPOANCHOR_REGEN_GOLDEN=1 to rewrite `after/` from the current output (then review it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from repoanchor.perturb.results import Failed, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree

ID = "constant-externalization"
TREES = Path(__file__).parent / "trees" / ID
CASES = sorted(p.name for p in TREES.iterdir() if (p / "case.json").is_file())


def materialize(folder: Path, dest: Path) -> Path:
    """Copy a golden folder to `dest`, turning *.py.txt back into *.py."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            rel = path.relative_to(folder).as_posix().removesuffix(".txt")
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest / rel)
    return dest


def as_golden(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix() + (".txt" if p.suffix == ".py" else ""): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def apply(src: Path, out: Path, seed: int = 0, fraction: float = 1.0, **options):
    config = ApplyConfig([ID], fraction=fraction, seed=seed, options={ID: options})
    report = apply_tree(src, out, config)
    assert not [o for o in report.outcomes if isinstance(o, Failed)]
    return report


def run_python(code: str, cwd: Path, *paths: Path, args: tuple[str, ...] = ()) -> str:
    """Run `code` in a fresh interpreter with only `paths` added to sys.path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(map(str, paths))
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, tmp_path: Path):
    spec = json.loads((TREES / case / "case.json").read_text())
    src = materialize(TREES / case / "before", tmp_path / "src")
    report = apply(src, tmp_path / "out", spec["seed"], spec["fraction"], **spec["options"])
    got = as_golden(tmp_path / "out")
    if os.environ.get("REPOANCHOR_REGEN_GOLDEN") == "1":
        shutil.rmtree(TREES / case / "after", ignore_errors=True)
        for rel, data in got.items():
            (TREES / case / "after" / rel).parent.mkdir(parents=True, exist_ok=True)
            (TREES / case / "after" / rel).write_bytes(data)
    assert got == as_golden(TREES / case / "after")
    reasons = [o.reason for o in report.outcomes if isinstance(o, Skipped)]
    for expected in spec["skipped"]:
        assert any(r.startswith(expected) for r in reasons), (expected, reasons)


# A module with every kind of value whose type JSON could blur, and a cycle, a star-import,
# a namespace package and a module that reads its own __file__.
EXACT = {
    "pkg/__init__.py": "from .values import *\nGREETING = 'hello'\n",
    "pkg/values.py": (
        '"""Values whose types must survive JSON."""\nfrom . import cycle\n\n'
        "INT = 7\nSEVEN_AGAIN = 7\nFLOAT = 7.0\nBOOL = True\nTEXT = '7'\nNONE = None\nNEG = -5\nNEG_ZERO = -0.0\n"
        "TENTH = 0.1\nTINY = 5e-324\nHUGE = 2 ** 70 + 123456789012345678901234567890\nHEX = 0xFF\n"
        "SURROGATE = '\\ud800x'\nUNICODE = 'h\\u00e9llo \\u2713 \\x00'\nRAW = r'\\d+\\s*'\nSPLIT = ('ab'\n   'cd')\n"
        "PAIR = (1, 1.0, True, '1', False, 0, 0.0)\n\n\ndef total():\n    return cycle.BASE + 2.5\n"
    ),
    "pkg/cycle.py": "from . import values\nBASE = 1000\n\n\ndef back():\n    return values.INT * 3\n",
    "pkg/reader.py": (
        "import os\nNAME = 'reader'\n\n\ndef own_text():\n"
        "    with open(__file__, encoding='utf-8') as fh:\n        return 'NAME' in fh.read()\n"
    ),
    "nsp/inner/mod.py": "WHO = 'namespace'\nRATE = 2.5\n",
}
MODULES = ["pkg", "pkg.values", "pkg.cycle", "pkg.reader", "nsp.inner.mod"]
NAMESPACE = """
import importlib, json, sys
out = {}
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    out[name] = {k: repr(v) for k, v in vars(module).items() if not k.startswith("__") and type(v).__name__
                 not in ("function", "module")}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def exact_variant(tmp_path_factory) -> tuple[Path, Path, object]:
    base = tmp_path_factory.mktemp("exact")
    for rel, text in EXACT.items():
        (base / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / "src" / rel).write_text(text)
    report = apply(base / "src", base / "out", seed=5, keep_trivial=True)
    (base / "elsewhere").mkdir()
    return base / "src", base / "out", report


def test_every_json_value_equals_its_literal_with_the_same_type(exact_variant):
    src, out, report = exact_variant
    entries = [e for e in report.resolution if e["kind"] == "json_value"]
    assert {e["type"] for e in entries} >= {"int", "float", "bool", "str", "NoneType"}
    check = (
        "import importlib, json, sys\nfails = []\nfor e in json.loads(sys.argv[1]):\n"
        "    name = e['visible_path'][:-3].replace('/', '.').removesuffix('.__init__')\n"
        "    value = getattr(importlib.import_module(name), e['binding'])[e['key']]\n"
        "    if repr(value) != e['original'] or type(value).__name__ != e['type']:\n"
        "        fails.append((e, repr(value)))\nprint(json.dumps(fails))\n"
    )
    fails = json.loads(run_python(check, src.parent / "elsewhere", out, args=(json.dumps(entries),)))
    assert fails == []
    originals = {e["original"] for e in entries}
    assert {"-0.0", "7", "7.0", "True", "'7'", "None", "5e-324", "'\\ud800x'"} <= originals


def test_module_namespace_gains_exactly_the_binding(exact_variant):
    src, out, report = exact_variant
    before = json.loads(run_python(NAMESPACE, src.parent / "elsewhere", src, args=tuple(MODULES)))
    after = json.loads(run_python(NAMESPACE, src.parent / "elsewhere", out, args=tuple(MODULES)))
    bindings = {e["visible_path"]: e["binding"] for e in report.resolution}
    for name in MODULES:
        rel = name.replace(".", "/") + ("/__init__.py" if name == "pkg" else ".py")
        assert set(after[name]) - set(before[name]) == {bindings[rel]}, name
        assert {k: v for k, v in after[name].items() if k in before[name]} == before[name], name


def test_loader_touches_no_sys_path_and_imports_only_json(exact_variant):
    src, out, _ = exact_variant
    probe = (
        "import sys\npath, mods = list(sys.path), set(sys.modules)\nimport pkg, pkg.reader, nsp.inner.mod\n"
        "print(sys.path == path, sorted(m for m in set(sys.modules) - mods if not m.startswith(('pkg', 'nsp'))))"
    )
    same_path, new_modules = run_python(probe, src.parent / "elsewhere", out).split(" ", 1)
    baseline = run_python(probe, src.parent / "elsewhere", src).split(" ", 1)[1]
    assert same_path == "True"
    extra = set(eval(new_modules)) - set(eval(baseline))
    assert extra <= {"json", "json.decoder", "json.scanner", "json.encoder", "_json"}


def test_loader_works_as_script_with_dash_m_and_from_a_zip(exact_variant, tmp_path: Path):
    _, out, _ = exact_variant
    for argv in (["-m", "pkg.values"], [str(out / "nsp" / "inner" / "mod.py")], [str(out / "pkg" / "reader.py")]):
        proc = subprocess.run([sys.executable, *argv], cwd=out if argv[0] == "-m" else tmp_path, capture_output=True)
        assert proc.returncode == 0, proc.stderr
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted((out / "pkg").rglob("*")):
            zf.write(path, path.relative_to(out).as_posix())
    probe = "import pkg.values as v, pkg.reader as r; print(v.__file__, repr(v.NEG_ZERO), v.SPLIT, r.NAME)"
    printed = run_python(probe, tmp_path, archive).split()
    assert printed[0].startswith(str(archive))
    assert printed[1:] == ["-0.0", "abcd", "reader"]


def test_star_import_exports_no_generated_name(exact_variant):
    src, out, _ = exact_variant
    probe = "ns = {}\nexec('from pkg.values import *', ns)\nprint(sorted(k for k in ns if k != '__builtins__'))"
    assert run_python(probe, src.parent / "elsewhere", out) == run_python(probe, src.parent / "elsewhere", src)


def test_same_value_shares_one_key_and_exact_types_stay_apart(exact_variant):
    _, out, report = exact_variant
    keys = {}
    for entry in report.resolution:
        if entry["visible_path"] == "pkg/values.py":
            keys.setdefault(entry["original"], set()).add(entry["key"])
    assert all(len(k) == 1 for k in keys.values())
    assert len({next(iter(keys[v])) for v in ("1", "1.0", "True", "'1'")}) == 4
    text = (out / "pkg" / "values.py").read_text()
    assert text.count(f'["{next(iter(keys["7"]))}"]') == 2


@pytest.mark.parametrize("literal", ["0x_FF", "0o1_7", "0B1_01", "1_000_003", "0_0"])
def test_every_int_literal_form_moves_as_its_value(tmp_path: Path, literal: str):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "consts.py").write_text(f"LIMIT = {literal}\nNAME = 'kept'\n")
    report = apply(tmp_path / "src", tmp_path / "out", keep_trivial=True)
    moved = {e["original"] for e in report.resolution if e["kind"] == "json_value"}
    assert moved == {repr(int(literal, 0)), "'kept'"}


@pytest.mark.parametrize("digits", [700, 5000])
def test_too_many_digits_is_refused_not_a_crash(tmp_path: Path, digits: int):
    """Over the bits every interpreter converts, an int stays a literal (huge-int). Over this interpreter's own
    limit (4,300 digits) the module does not even compile here: refused the same way, then rolled back as not
    compiling, where reading the literal used to raise out of the scan."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "consts.py").write_text(f"LIMIT = {'9' * digits}\nNAME = 'kept'\n")
    report = apply_tree(tmp_path / "src", tmp_path / "out", ApplyConfig([ID], fraction=1.0))
    reasons = [o.reason for o in report.outcomes if isinstance(o, Skipped)]
    assert any(r.startswith("huge-int") for r in reasons)
    errors = [o.error for o in report.outcomes if isinstance(o, Failed)]
    assert all(e.startswith("output does not compile") and "Traceback" not in e for e in errors)
    assert bool(errors) is (digits > 4300)


def test_refusal_rules_match_parents_by_exact_type_as_isinstance_would():
    """The rules are looked up by `type(parent)`: equal to `isinstance` only while no LibCST node class
    subclasses one of theirs (a LibCST upgrade that adds one must fail here, not skip a refusal)."""
    from repoanchor.perturb.mirage.constants.rules import _PARENT_RULES

    for kind in _PARENT_RULES:
        assert kind.__subclasses__() == [], kind
