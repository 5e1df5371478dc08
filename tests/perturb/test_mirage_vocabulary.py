"""Names RepoMirage perturbations create (proxies, hidden modules, decoys, the masking forwarder's locals,
constant-externalization's bindings and JSON files) are made of the project's own words: on toolz every
word of every generated name occurs in toolz's identifiers, no name reveals its role, and the same seed
gives the same names."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import keyword
import shutil
import sys
import tokenize
from dataclasses import replace
from pathlib import Path, PurePosixPath

import pytest

from repoanchor.perturb.mirage.vocabulary import (
    GIVEAWAYS,
    _identifiers,
    fitting,
    project_vocabulary,
    words_of_identifier,
)
from repoanchor.perturb.source.files import python_files
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.pypi import fetch_sdist

MIRAGE = ["proxy-imports", "runtime-target-masking"]


def test_words_split_from_snake_and_camel_case() -> None:
    assert words_of_identifier("parseHTTPHeader_v2") == ["parse", "http", "header", "v"]
    assert words_of_identifier("_merge_sorted") == ["merge", "sorted"]


def test_a_tiny_project_keeps_the_generic_vocabulary(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def merge(a, b):\n    return a\n")
    assert project_vocabulary(tmp_path, ["m.py"]) is None


def test_fitting_words_are_the_projects_own_when_it_has_enough() -> None:
    vocabulary = ("curry", "file", "merge", "path", "source", "sorted")
    assert fitting(vocabulary, ("path", "source", "file", "location")) == ("file", "path", "source")
    assert fitting(vocabulary, ("path", "location", "origin")) == vocabulary  # one fitting word: every name alike


def _generated_modules(tree: Path, seed: int, out: Path) -> list[str]:
    config = ApplyConfig(MIRAGE, fraction=1.0, file_fraction=0.6, seed=seed, check_interpreters=False, workers=1)
    report = apply_tree(tree, out, config)
    existing = {p.relative_to(tree).as_posix() for p in tree.rglob("*.py")}
    return sorted(rel for rel in report.changed_files if rel.endswith(".py") and rel not in existing)


@pytest.mark.slow
def test_generated_names_use_only_the_projects_words(tmp_path: Path) -> None:
    tree = fetch_sdist("toolz", "1.0.0")
    vocabulary = set(project_vocabulary(tree, python_files(tree)[0]) or ())
    generated = _generated_modules(tree, 3, tmp_path / "a")
    existing = {p.name.split(".")[0].lower() for p in tree.rglob("*")}
    assert len(generated) > 20
    for rel in generated:
        stem = Path(rel).stem
        words = [word for word in stem.split("_") if word]
        assert set(words) <= vocabulary | set(Path(rel).parent.parts), rel  # a masked module's own stem
        assert not set(words) & GIVEAWAYS, rel
        assert stem not in sys.stdlib_module_names, rel
        assert not keyword.iskeyword(stem), rel
        assert stem.lower() not in existing, rel
    assert generated == _generated_modules(tree, 3, tmp_path / "b")


@pytest.mark.slow
def test_a_gold_patch_cannot_rename_the_generated_modules(tmp_path: Path) -> None:
    """V' (the original with the gold patch, perturbed with V's seed) takes its words from the original: a
    patch that adds identifiers would otherwise shift every draw (its words sort first here) and rename V''s
    proxies, so the remapped patch would touch files the gold patch never did, and could leak the fix's words."""
    original = fetch_sdist("toolz", "1.0.0")
    with_gold = tmp_path / "with-gold"
    shutil.copytree(original, with_gold)
    with (with_gold / "toolz" / "itertoolz.py").open("a") as module:
        module.write("\n\ndef aardvark_abacus(aardwolf_abbey):\n    return aardwolf_abbey\n")
    config = ApplyConfig(MIRAGE, fraction=1.0, file_fraction=0.6, seed=3, check_interpreters=False, workers=1)
    names = {
        label: sorted(set(apply_tree(tree, tmp_path / label, cfg).changed_files) - {"toolz/itertoolz.py"})
        for label, tree, cfg in [
            ("v", original, config),
            ("v-gold-own-words", with_gold, config),
            ("v-gold", with_gold, replace(config, vocabulary_from=original)),
        ]
    }
    assert names["v-gold"] == names["v"]
    assert names["v-gold-own-words"] != names["v"]  # what the option prevents
    assert any("aardvark" in rel or "aardwolf" in rel for rel in names["v-gold-own-words"])


def _bound_names(source: str) -> set[str]:
    """Every name the forwarder binds: its helper, the helper's parameters and locals."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef):
            found |= {node.name, *(arg.arg for arg in node.args.args)}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
    return found


def _mirage_names(tree: Path, seed: int, out: Path) -> dict[str, set[tuple[str, str]]]:
    """(name, the module or folder it belongs to) for each binding, JSON file stem and forwarder local."""
    transforms = ["constant-externalization", "runtime-target-masking"]
    config = ApplyConfig(transforms, fraction=1.0, file_fraction=0.6, seed=seed, check_interpreters=False, workers=1)
    report = apply_tree(tree, out, config)
    entries = report.resolution
    wrapped = [e["visible_path"] for e in entries if e["kind"] == "wrapper_module"]
    return {
        "binding": {(e["binding"], e["visible_path"]) for e in entries if e["kind"] == "json_value"},
        "resource": {(PurePosixPath(e["runtime_path"]).stem, e["runtime_path"]) for e in entries if "binding" in e},
        "local": {(name, rel) for rel in wrapped for name in _bound_names((out / rel).read_text(encoding="utf-8"))},
    }


@pytest.mark.slow
def test_bindings_resources_and_forwarder_locals_use_only_the_projects_words(tmp_path: Path) -> None:
    """The module's or folder's own name may lead a binding or file stem (``_curry_...``); every other word
    is one of toolz's, none says what the name is for, and no file stem is a taken one or a stdlib module."""
    tree = fetch_sdist("toolz", "1.0.0")
    vocabulary = set(project_vocabulary(tree, python_files(tree)[0]) or ())
    names = _mirage_names(tree, 3, tmp_path / "a")
    existing = {p.name.split(".")[0].lower() for p in tree.rglob("*")}
    assert len(names["binding"]) >= 4
    assert len(names["resource"]) >= 3
    assert len(names["local"]) >= 35
    for kind, pairs in names.items():
        for name, rel in pairs:
            words = set(words_of_identifier(name))
            own = {w for part in PurePosixPath(rel).with_suffix("").parts for w in words_of_identifier(part)}
            assert words, (kind, name)
            assert words <= vocabulary | own, (kind, name, words - vocabulary - own)
            assert not words & GIVEAWAYS, (kind, name)
    for stem, _ in names["resource"]:
        assert stem.lstrip("_").lower() not in existing, stem
        assert stem not in sys.stdlib_module_names, stem
    for binding, rel in names["binding"]:
        assert binding not in (tree / rel).read_text(encoding="utf-8"), binding  # no name the module had
    assert names == _mirage_names(tree, 3, tmp_path / "b")
    assert names["local"] != _mirage_names(tree, 4, tmp_path / "c")["local"]


ROOT = Path(__file__).parents[2]


def _tokenize_names(path: Path) -> set[str]:
    """The reference: NAME tokens of Python's own tokenizer, less keywords and dunders."""
    with path.open("rb") as handle:
        tokens = list(tokenize.tokenize(handle.readline))
    names = {tok.string for tok in tokens if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string)}
    return {name for name in names if not (name.startswith("__") and name.endswith("__"))}


TRICKY = {
    "prefixes": "a = rb'x_in_bytes' + Rb\"y\" + f'{hidden_in_fstring}' + u'z' + br'''w\n'''\nkept_name = 1\n",
    "numbers": "x = 1e-5 + 0x1f + 1_000j + .5e3 + 0o17 + 0b1010 + 3.14J\nafter_numbers = x\n",
    "escapes": "s = 'it\\'s' + \"a \\\" quote\" + '''tri\\''' still''' + '\\\n'\nescaped_after = s\n",
    "comments": "# commented_out = 1\nvalue = 2  # trailing_words here\n",
    "strings-then-names": "if'a'in'b':pass\nresult = ['x'if'y'else'z', 1if True else 2]\n",
    "unicode": "café = 1\nnaïve_total = café\n",
    "latin1": "# -*- coding: latin-1 -*-\nnom = 'é'\n",
}


@pytest.mark.parametrize(
    "path",
    [*sorted((ROOT / "perturb").rglob("*.py")), *[Path(m.__file__) for m in (ast, tokenize, argparse, dataclasses)]],
    ids=lambda p: p.name,
)
def test_identifiers_are_the_tokenizers_names_on_real_modules(path: Path) -> None:
    assert _identifiers(path) == _tokenize_names(path)


@pytest.mark.parametrize("name", list(TRICKY))
def test_identifiers_are_the_tokenizers_names_on_tricky_literals(tmp_path: Path, name: str) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(TRICKY[name].encode("latin-1" if name == "latin1" else "utf-8"))
    assert _identifiers(path) == _tokenize_names(path)
    assert _identifiers(path)  # every case has names to find
