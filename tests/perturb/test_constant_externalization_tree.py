"""constant-externalization over whole trees: bad input is skipped with a reason and nothing
outside the variant is written; same seed, same bytes; seeds share no generated name; phi picks
a share of the values; and real PyPI projects keep every test outcome with most modules rewritten."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from repoanchor.perturb.results import Applied, Failed, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.validate import validate
from tests.perturb.test_constant_externalization import as_golden
from tests.support.projects import PROJECTS, project_baseline

ID = "constant-externalization"
GOOD = "LIMIT = 42\nNAME = 'widget'\n\n\ndef scaled(x):\n    return x * 2.5 if x > 10 else NAME\n"


def _apply(src: Path, out: Path, seed: int = 0, fraction: float = 1.0, **options):
    config = ApplyConfig([ID], fraction=fraction, seed=seed, options={ID: options})
    return apply_tree(src, out, config)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_bad_input_is_skipped_with_reasons(tmp_path: Path):
    src = tmp_path / "src"
    pkg = src / "pkg"
    (pkg / "ns" / "deep").mkdir(parents=True)
    (pkg / "shadow").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text(GOOD)
    files = {
        "__init__.py": "from .good import *\n",
        "good.py": GOOD,
        "star.py": "from os.path import *\nSEP = '::'\n",
        "broken.py": "def f(:\n    pass\n",
        "py2.py": 'print "hello"\n',
        "empty.py": "",
        "setup.py": "VERSION = '1.0'\n",
        "_version.py": "version = '1.0.3'\n",
        "ns/__init__.py": "__path__ = __import__('pkgutil').extend_path(__path__, __name__)\nX = 'ns'\n",
        "ns/deep/leaf.py": GOOD,
        "shadow/json.py": "def loads(text):\n    return 'not the json you want'\n",
        "shadow/user.py": GOOD,
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    (pkg / "latin.py").write_bytes(b"s = '\xe9t\xe9'\n")
    (pkg / "nul.py").write_bytes(b"x = 1234\x00\n")
    (pkg / "huge.py").write_text("".join(f"V{i} = {i + 100}\n" for i in range(300_000)))
    (pkg / "link.py").symlink_to(outside / "evil.py")
    before = _snapshot(tmp_path)
    report = _apply(src, tmp_path / "out")
    assert {k: v for k, v in _snapshot(tmp_path).items() if not k.startswith("out/")} == before
    assert not [o for o in report.outcomes if isinstance(o, Failed)]
    reasons = {(o.file.removeprefix("pkg/"), o.reason.split(":")[0]) for o in report.outcomes if isinstance(o, Skipped)}
    for expected in [
        ("broken.py", "unparseable"),
        ("py2.py", "unparseable"),
        ("latin.py", "undecodable"),
        ("nul.py", "binary"),
        ("huge.py", "too large"),
        ("empty.py", "empty"),
        ("setup.py", "build-script"),
        ("_version.py", "build-script"),
        ("ns/__init__.py", "namespace-init"),
        ("__init__.py", "no-candidates"),
        ("shadow/user.py", "shadowed-stdlib"),
    ]:
        assert expected in reasons, (expected, sorted(reasons))
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)}
    assert applied == {"pkg/good.py", "pkg/star.py", "pkg/ns/deep/leaf.py"}
    assert (tmp_path / "out" / "pkg" / "link.py").is_symlink()


def _variant(tmp_path: Path, name: str, seed: int) -> tuple[dict[str, bytes], list[dict]]:
    src = tmp_path / "src"
    if not src.exists():
        for folder in ("pkg", "pkg/sub", "tools"):
            (src / folder).mkdir(parents=True)
            for stem in ("alpha", "beta", "gamma"):
                (src / folder / f"{stem}.py").write_text(GOOD.replace("widget", f"{folder}-{stem}"))
    report = _apply(src, tmp_path / name, seed=seed)
    return as_golden(tmp_path / name), report.resolution


def _generated(tree: dict[str, bytes], resolution: list[dict]) -> set[str]:
    """Binding names and resource file stems: what the transform invents rather than derives."""
    return {e["binding"] for e in resolution} | {Path(rel).stem for rel in tree if rel.endswith(".json")}


def test_same_seed_same_bytes_and_seeds_share_no_generated_name(tmp_path: Path):
    tree_a, res_a = _variant(tmp_path, "a", 11)
    tree_b, res_b = _variant(tmp_path, "b", 11)
    assert tree_a == tree_b
    assert res_a == res_b
    variants = [_variant(tmp_path, f"s{seed}", seed) for seed in range(1, 21)]
    names = [_generated(*v) for v in variants]
    assert all(names[i].isdisjoint(names[j]) for i in range(3) for j in range(i + 1, 3)), names[:3]
    # Names are drawn, not fixed: over 20 seeds no generated name recurs in more than two variants
    # (a pair of seeds shares one of its ~12 names about 2% of the time: the vocabulary is finite).
    counts = Counter(name for found in names for name in found)
    assert max(counts.values()) <= 2, counts.most_common(3)
    keys = [{(e["visible_path"], e["key"]) for e in v[1]} for v in variants[:3]]
    assert keys[0] != keys[1] != keys[2]
    for tree, _ in variants:
        text = b"".join(tree.values()).decode()
        assert not re.search(r"dependencies_|_lll_|proxy_|normal_code|target_instruction", text)


def test_fraction_picks_a_share_of_values_and_every_occurrence_of_each(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    body = "".join(f"V{i} = {i + 100}\nW{i} = {i + 100}\n" for i in range(20))
    (src / "many.py").write_text(body)
    report = _apply(src, tmp_path / "out", seed=4, fraction=0.5)
    entries = report.resolution
    assert len(entries) == 10
    text = (tmp_path / "out" / "many.py").read_text()
    for entry in entries:
        assert text.count(f'["{entry["key"]}"]') == 2
    data = json.loads((tmp_path / "out" / Path(entries[0]["runtime_path"]).name).read_text())
    assert {k: repr(v) for k, v in data.items()} == {e["key"]: e["original"] for e in entries}


REAL = {
    "click": ["src/click"],
    "toolz": ["toolz", "tlz"],
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("project", "seed", "fraction", "keep_trivial"),
    [
        pytest.param(
            p, seed, fraction, trivial, marks=pytest.mark.xdist_group(p), id=f"{p}-{seed}-{fraction}-{trivial}"
        )
        for p in REAL
        for seed, fraction, trivial in [(0, 1.0, False), (1, 0.7, True)]
    ],
)
def test_real_project_outcomes_unchanged(project: str, seed: int, fraction: float, keep_trivial: bool, tmp_path):
    tree, baseline = project_baseline(project)
    report = _apply(tree, tmp_path / "variant", seed=seed, fraction=fraction, keep_trivial=keep_trivial)
    assert not [o for o in report.outcomes if isinstance(o, Failed)]
    modules = {o.file for o in report.outcomes if o.file.startswith(tuple(REAL[project]))}
    applied = {o.file for o in report.outcomes if isinstance(o, Applied)} & modules
    assert len(applied) >= 0.5 * len(modules), (len(applied), len(modules))
    assert len(report.resolution) >= 50
    verdict = validate(tree, tmp_path / "variant", PROJECTS[project][1], baseline=baseline)
    assert verdict.ok, verdict.to_json()
    assert verdict.n_compared >= 150


@pytest.mark.parametrize("options", [{"keep_trival": True}, {"keep_trivial": "yes"}])
def test_bad_options_are_configuration_errors(options: dict, tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mod.py").write_text(GOOD)
    with pytest.raises(ValueError, match="constant-externalization: "):
        _apply(tmp_path / "src", tmp_path / "out", **options)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("main_block", "applied"),
    [("", True), ("\n\nif __name__ == '__main__':\n    print(NAME)\n", False)],
    ids=["package-module", "runnable-as-a-script"],
)
def test_a_sibling_named_like_a_loader_import_refuses_only_modules_run_as_scripts(tmp_path, main_block, applied):
    """pytest's `_pytest/pathlib.py` sits beside the gold files: a package module without a main block only
    runs with a spec (import, `python -m`), whose loader reads the JSON; the sibling is never consulted."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "pathlib.py").write_text("def Path(p):\n    raise RuntimeError('not the stdlib pathlib')\n")
    (src / "pkg" / "user.py").write_text(GOOD + main_block)
    report = _apply(src, tmp_path / "out")
    outcomes = {o.file: o for o in report.outcomes}
    assert isinstance(outcomes["pkg/user.py"], Applied) == applied
    if not applied:
        assert outcomes["pkg/user.py"].reason.startswith("shadowed-stdlib: pkg/pathlib.py")
