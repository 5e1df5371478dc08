"""One parse per module per variant across the tree transforms: a tree kept for the bytes it was read or emitted
as serves the next transform that reads those bytes; other bytes, and a tree pushed out by the memory bound, miss."""

from __future__ import annotations

import gc
import subprocess
import sys
import traceback
from pathlib import Path

import libcst as cst
import pytest
from libcst._nodes.base import CSTNode

from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.metadata import variant_metadata
from repoanchor.perturb.results import Applied
from repoanchor.perturb.speed.emission import FileEmission
from repoanchor.perturb.speed.parsed import ParsedModules
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

MIRAGE = ["constant-externalization", "proxy-imports", "runtime-target-masking"]
PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": (
        "import math\nimport json\n\nSIDES = 4\nLABEL = 'square'\n\n\n"
        "def area(side):\n    if side > 10:\n        return side * SIDES\n    return math.sqrt(side)\n\n\n"
        "def dump(value):\n    return json.dumps({'label': LABEL, 'value': value})\n"
    ),
    "pkg/colors.py": (
        "import os\nfrom collections import OrderedDict\n\nRED = 'ff0000'\nLEVEL = 3\n\n\n"
        "def palette():\n    if LEVEL > 2:\n        return OrderedDict(red=RED, sep=os.sep)\n    return {}\n"
    ),
    "main.py": (
        "from pkg.shapes import area, dump\nfrom pkg.colors import palette\n\nprint(area(3), dump(1), palette())\n"
    ),
}


def test_the_same_bytes_get_the_same_tree_and_other_bytes_a_new_one():
    modules = ParsedModules()
    first = modules.parse("m.py", b"x = 1\n")
    assert modules.parse("m.py", b"x = 1\n") is first
    changed = modules.parse("m.py", b"x = 2\n")
    assert changed is not first
    assert changed.code == "x = 2\n"
    assert (modules.parses, modules.hits) == (2, 1)


def test_a_tree_kept_for_written_bytes_serves_their_next_read():
    modules = ParsedModules()
    emitted = cst.parse_module("a = 1\n").with_changes(body=[cst.parse_statement("b = 2\n")])
    modules.keep("m.py", emitted.bytes, emitted)
    assert modules.parse("m.py", emitted.bytes) is emitted
    assert modules.parses == 0


def test_the_oldest_trees_go_past_the_memory_bound():
    modules = ParsedModules(max_bytes=12)
    a = modules.parse("a.py", b"a = 1\n")
    modules.parse("b.py", b"b = 1\n")
    modules.parse("c.py", b"c = 1\n")  # 18 bytes held: a.py's tree goes
    assert modules.parse("a.py", b"a = 1\n") is not a
    assert (modules.parses, modules.hits) == (4, 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_three_mirage_transforms_parse_each_module_once(tmp_path: Path, seed: int):
    src = make_tree(tmp_path / "src", PACKAGE)
    out = tmp_path / "variant"
    config = ApplyConfig(MIRAGE, fraction=1.0, file_fraction=1.0, seed=seed, check_interpreters=False)
    report = apply_tree(src, out, config)
    applied = {(o.transform, o.file) for o in report.outcomes if isinstance(o, Applied)}
    assert {transform for transform, _ in applied} == set(MIRAGE)
    # Each module is read by every transform that rewrites it; only its first read parses.
    modules = {file for _, file in applied}
    assert report.tree_parses == {"parsed": len(modules), "reused": len(applied) - len(modules)}
    run = subprocess.run([sys.executable, "main.py"], cwd=out, capture_output=True, text=True, timeout=60)
    original = subprocess.run([sys.executable, "main.py"], cwd=src, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == original.stdout


def test_only_modules_the_next_transforms_read_are_kept():
    modules = ParsedModules()
    kept = modules.parse("read-next.py", b"a = 1\n")
    modules.parse("read-by-none.py", b"b = 1\n")
    modules.expect(frozenset({"read-next.py", "read-now.py"}), frozenset({"read-next.py"}))
    modules.parse("read-now.py", b"c = 1\n")  # read by this transform alone: not kept
    assert modules.parse("read-next.py", b"a = 1\n") is kept
    assert modules.parse("read-by-none.py", b"b = 1\n") is not None  # dropped by expect: parsed again
    modules.parse("read-now.py", b"c = 1\n")
    assert (modules.parses, modules.hits) == (5, 1)


def test_an_emission_travels_with_its_tree():
    modules = ParsedModules()
    emission = FileEmission()
    modules.keep("kept.py", b"a = 1\n", cst.parse_module("a = 1\n"), emission)
    assert modules.emission("kept.py") is emission
    modules.parse("other.py", b"b = 1\n")
    assert modules.emission("other.py") is not emission  # a fresh parse has an emission of its own
    # A module no later transform reads is not kept, yet the emission of its tree serves the write after its read.
    modules.expect(frozenset({"now.py"}), frozenset())
    modules.parse("now.py", b"c = 1\n")
    assert not modules.wanted("now.py")
    assert modules.emission("now.py") is modules.emission("now.py")
    modules.parse("else.py", b"d = 1\n")
    assert modules.emission("now.py") is not modules.emission("now.py")  # no tree of now.py is held any more


def test_a_tree_the_file_passes_hand_over_is_written_emitting_only_new_statements(monkeypatch):
    """A tree transform writing a module the file passes made re-emits none of their statements."""
    source = PACKAGE["pkg/shapes.py"].encode()
    passes = [PassSpec("dead-code"), PassSpec("double-negation")]
    dropped = transform_source(source, "pkg/shapes.py", passes, seed=0, fraction=1.0)
    assert dropped.module is None
    assert dropped.emission is None
    result = transform_source(source, "pkg/shapes.py", passes, seed=0, fraction=1.0, keep_tree=True)
    assert result.new_source is not None
    assert result.emission is not None
    derived = result.module.with_changes(body=[*result.module.body, cst.parse_statement("TAIL = 1\n")])
    expected = derived.code
    emitted: list[CSTNode] = []
    codegen = CSTNode._codegen

    def counted(self, state, **kwargs):
        emitted.append(self)
        return codegen(self, state, **kwargs)

    monkeypatch.setattr(CSTNode, "_codegen", counted)
    assert result.emission.code(derived) == expected
    assert any(node is derived.body[-1] for node in emitted)
    assert not any(node is statement for node in emitted for statement in result.module.body)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("seed", [0, 1])
def test_file_passes_in_this_process_hand_their_trees_to_the_tree_transforms(tmp_path: Path, seed: int):
    """One worker: the tree transforms read every module as a tree the file passes made (their output, or the
    file's own parse where no site changed). Worker processes keep theirs, and the variant is the same."""
    src = make_tree(tmp_path / "src", PACKAGE)
    transforms = ["dead-code", "double-negation", *MIRAGE]
    reports, metadata = {}, {}
    for workers in (1, 2):  # 2 workers and four files: the file passes run in worker processes
        config = ApplyConfig(
            transforms, fraction=1.0, file_fraction=1.0, seed=seed, workers=workers, check_interpreters=False
        )
        reports[workers] = apply_tree(src, tmp_path / f"workers-{workers}", config)
        metadata[workers] = variant_metadata(src, config, reports[workers])
    assert reports[1].tree_parses["parsed"] == 0
    assert reports[1].tree_parses["reused"] >= len(MIRAGE)
    assert reports[2].tree_parses["parsed"] > 0
    assert _snapshot(tmp_path / "workers-1") == _snapshot(tmp_path / "workers-2")
    assert metadata[1] == metadata[2]  # the counts of parses are no part of the variant


@pytest.mark.parametrize("transform", ["proxy-imports", "constant-externalization", "runtime-target-masking"])
def test_the_collector_waits_while_a_tree_transform_runs(tmp_path: Path, transform: str):
    """A tree transform holds modules' trees while it parses more: full collections walked every kept tree
    again and again (9 of a 55 s SymPy variant). Collections are made frequent here, and none may start
    inside the transform."""
    files = {"pkg/__init__.py": "from .m0 import f0\n"}
    files |= {f"pkg/m{i}.py": f"LIMIT_{i} = {i}\n\n\ndef f{i}(x):\n    return x + LIMIT_{i}\n" for i in range(8)}
    src = make_tree(tmp_path / "src", files)
    inside = []

    def noticed(phase: str, info: dict) -> None:
        frames = traceback.extract_stack()
        if phase == "start" and any(f.name == "apply_tree" and "mirage" in Path(f.filename).parts for f in frames):
            inside.append(info["generation"])

    thresholds = gc.get_threshold()
    gc.set_threshold(20, 1, 1)
    gc.callbacks.append(noticed)
    try:
        config = ApplyConfig([transform], fraction=1.0, seed=0, workers=1, check_interpreters=False)
        report = apply_tree(src, tmp_path / "out", config)
    finally:
        gc.callbacks.remove(noticed)
        gc.set_threshold(*thresholds)
    assert report.tree_written
    assert not inside
