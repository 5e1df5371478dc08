"""The sampler (Algorithm 1): seeded plans, hyperparameters honoured and recorded, gold files always
selected, test files never touched, failures recorded without stopping the batch, determinism."""

from __future__ import annotations

import filecmp
import json
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from repoanchor.perturb.filepass import select_files
from repoanchor.perturb.sampler.build import apply_config, sample
from repoanchor.perturb.sampler.sampler import SamplerConfig, draw_plan, prepare, variant_id, variant_seed
from repoanchor.perturb.source.files import python_files
from repoanchor.perturb.transforms import SPT_IDS, TRANSFORMS
from tests.support.toy_project import TEST_LIKE, write_toy_project

ISSUE = "Calling `total_0()` on an empty list fails; the label 'total of items' is wrong.\n"
KW_BOUND = ("dead-method", "dead-string-assign")


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    return write_toy_project(tmp_path_factory.mktemp("toy") / "src")


def _tree(root: Path) -> dict[str, bytes]:
    out = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = Path(folder) / name
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def _outcome_files(meta: dict, transform: str) -> set[str]:
    return {o["file"] for o in meta["apply"]["outcomes"] if o["transform"] == transform and o["file"] != "*"}


def test_variant_seeds_and_ids_are_derived_not_random():
    seeds = [variant_seed(7, i) for i in range(2000)]
    assert len(set(seeds)) == 2000
    assert seeds == [variant_seed(7, i) for i in range(2000)]
    assert variant_seed(8, 0) != variant_seed(7, 0)
    ident = variant_id(seeds[0])
    assert len(ident) == 12
    assert int(ident, 16) >= 0
    assert str(seeds[0]) not in ident


def test_config_defaults_and_validation():
    config = SamplerConfig()
    assert (config.n, config.nt, config.phi, config.nk, config.nf) == (1, 3, 0.7, 5, 10)
    assert config.catalogue == list(TRANSFORMS)
    assert len(config.catalogue) == 17
    assert SamplerConfig.model_fields["phi"].description  # attribute docstrings document each knob
    for bad in ({"nt": 4, "catalogue": ["if-else-swap"]}, {"phi": 0}, {"phi": 1.5}, {"catalogue": ["nope"]}):
        with pytest.raises(ValidationError):
            SamplerConfig(**bad)
    with pytest.raises(ValidationError):
        SamplerConfig(catalogue=["dead-code", "dead-code"], nt=1)
    assert SamplerConfig(gold_files=["./pkg/a.py", "pkg/a.py"]).gold_files == ["pkg/a.py"]
    for outside in ("/etc/passwd.py", "../x.py"):
        with pytest.raises(ValidationError, match="relative"):
            SamplerConfig(gold_files=[outside])


@pytest.mark.parametrize("seed", [0, 1, 99])
def test_plan_draws_nt_distinct_transforms_and_a_p_file_each(seed: int):
    config = SamplerConfig(seed=seed, n=20, catalogue=list(SPT_IDS))
    plans = [draw_plan(config, i) for i in range(20)]
    for plan in plans:
        assert len(set(plan.transforms)) == 3
        assert set(plan.transforms) <= set(SPT_IDS)
        assert set(plan.p_file) == set(plan.transforms)
        assert all(0.0 <= p < 1.0 for p in plan.p_file.values())
        assert plan.keyword_bound == [t for t in plan.transforms if t in KW_BOUND]
    assert len({tuple(p.transforms) for p in plans}) > 10  # uniform draws, not one fixed triple
    assert (
        draw_plan(SamplerConfig(seed=seed, n=3), 2).to_dict() == draw_plan(SamplerConfig(seed=seed, n=50), 2).to_dict()
    )


def test_hyperparameters_are_honoured_and_recorded(toy: Path, tmp_path: Path):
    gold = ["pkg/m1.py"]
    config = SamplerConfig(n=8, nt=4, phi=0.5, nk=1, nf=1, seed=11, catalogue=list(SPT_IDS), gold_files=gold)
    metas = sample(toy, tmp_path / "out", config, issue=ISSUE)
    batch = prepare(toy, tmp_path / "out", config, ISSUE)
    files, _ = python_files(toy)
    assert any(m["plan"]["keyword_bound"] for m in metas)
    for meta in metas:
        assert meta["ok"], meta["error"]
        plan, applied = meta["plan"], meta["apply"]["config"]
        assert meta["sampler"] == config.model_dump(mode="json")
        assert applied["fraction"] == 0.5
        assert applied["seed"] == meta["variant_seed"]
        assert applied["file_fractions"] == plan["p_file"]
        assert applied["targets"] == gold
        assert applied["max_files"] == {t: 1 for t in plan["keyword_bound"]}
        extraction = meta["keyword_extraction"]
        for t in plan["transforms"]:
            selected = select_files(files, t, apply_config(batch, draw_plan(config, meta["index"])))
            assert _outcome_files(meta, t) <= selected  # p_file decides the non-gold files
            assert "pkg/m1.py" in _outcome_files(meta, t) or t in KW_BOUND
        for t in plan["keyword_bound"]:
            pool = extraction["methods" if t == "dead-method" else "string_literals"]
            assert len(plan["keywords"][t]) == 1
            assert set(plan["keywords"][t]) <= set(pool)
            assert _outcome_files(meta, t) <= set(gold)  # Nf = 1, and the gold file comes first


def test_gold_files_are_selected_by_every_transform_whatever_p_file(toy: Path, tmp_path: Path):
    gold = ["pkg/m2.py", "pkg/m4.py", "tests/test_toy.py", "pkg/missing.py"]
    config = SamplerConfig(n=3, nt=14, nf=1, seed=5, catalogue=list(SPT_IDS), gold_files=gold)
    for meta in sample(toy, tmp_path / "out", config, issue=ISSUE):
        assert meta["gold_files"] == ["pkg/m2.py", "pkg/m4.py"]
        reasons = {g["file"]: g["reason"] for g in meta["gold_files_ignored"]}
        assert reasons == {
            "pkg/missing.py": "not found in the source tree",
            "tests/test_toy.py": "test file: never transformed",
        }
        for t in SPT_IDS:
            assert {"pkg/m2.py", "pkg/m4.py"} <= _outcome_files(meta, t), t


def test_test_files_are_never_touched_and_patterns_are_overridable(toy: Path, tmp_path: Path):
    config = SamplerConfig(n=3, nt=14, phi=1.0, seed=2, catalogue=list(SPT_IDS), gold_files=list(TEST_LIKE))
    original = _tree(toy)
    for meta in sample(toy, tmp_path / "a", config, issue=ISSUE):
        variant = _tree(tmp_path / "a" / meta["variant_id"])
        for rel in [*TEST_LIKE, "tests/test_toy.py"]:
            assert variant[rel] == original[rel], rel
        assert any(variant[r] != original[r] for r in original if r.startswith("pkg/m"))
    own = SamplerConfig(
        n=2, nt=14, phi=1.0, catalogue=list(SPT_IDS), gold_files=["pkg/m0.py"], test_patterns=["pkg/m0.py"]
    )
    for meta in sample(toy, tmp_path / "b", own, issue=ISSUE):
        variant = _tree(tmp_path / "b" / meta["variant_id"])
        assert variant["pkg/m0.py"] == original["pkg/m0.py"]
        assert variant["pkg/util_test.py"] != original["pkg/util_test.py"]  # no longer a test file here


def test_same_seed_gives_byte_identical_variants_and_metadata(toy: Path, tmp_path: Path):
    config = SamplerConfig(n=4, seed=3, catalogue=list(SPT_IDS), gold_files=["pkg/m0.py"])
    first = sample(toy, tmp_path / "a", config, issue=ISSUE)
    second = sample(toy, tmp_path / "b", config, issue=ISSUE, workers=2)
    assert [m["variant_id"] for m in first] == [m["variant_id"] for m in second]
    for meta in first:
        vid = meta["variant_id"]
        assert _tree(tmp_path / "a" / vid) == _tree(tmp_path / "b" / vid)
        assert (tmp_path / "a" / f"{vid}.json").read_bytes() == (tmp_path / "b" / f"{vid}.json").read_bytes()
        assert meta["git"]["commit"] == json.loads((tmp_path / "b" / f"{vid}.json").read_text())["git"]["commit"]
    other = sample(toy, tmp_path / "c", config.model_copy(update={"seed": 4}), issue=ISSUE)
    assert {m["variant_id"] for m in other}.isdisjoint(m["variant_id"] for m in first)
    assert [m["plan"] for m in other] != [m["plan"] for m in first]
    trees_a = [_tree(tmp_path / "a" / m["variant_id"]) for m in first]
    assert all(_tree(tmp_path / "c" / m["variant_id"]) not in trees_a for m in other)


def test_a_failing_variant_is_recorded_and_the_batch_goes_on(toy: Path, tmp_path: Path):
    broken = "repoanchor.perturb.transforms.no_such_module.Nope"
    config = SamplerConfig(n=8, nt=1, seed=1, catalogue=["if-else-swap", broken])
    out = tmp_path / "out"
    squatter = out / variant_id(variant_seed(1, 0))
    squatter.mkdir(parents=True)
    (squatter / "keep.txt").write_text("not ours")
    metas = sample(toy, out, config)
    assert metas[0]["error"].startswith("ValueError")
    assert "already exists" in metas[0]["error"]
    assert (squatter / "keep.txt").read_text() == "not ours"  # never delete what we did not create
    bad = [m for m in metas[1:] if m["plan"]["transforms"] == [broken]]
    good = [m for m in metas[1:] if m["plan"]["transforms"] == ["if-else-swap"]]
    assert bad
    assert good
    assert len(bad) + len(good) == 7
    for meta in bad:
        assert not meta["ok"]
        assert "cannot load transform" in meta["error"]
        assert not (out / meta["variant_id"]).exists()
        assert json.loads((out / f"{meta['variant_id']}.json").read_text())["error"] == meta["error"]
    for meta in good:
        assert meta["ok"]
        assert (out / meta["variant_id"] / "pkg" / "m0.py").is_file()


def test_keyword_bound_transforms_without_keywords_are_recorded_skips(toy: Path, tmp_path: Path):
    config = SamplerConfig(n=1, nt=2, catalogue=list(KW_BOUND))
    (meta,) = sample(toy, tmp_path / "out", config, issue=None)
    assert meta["keyword_extraction"] == {
        "source": "none", "reason": "no issue text", "model": None, "methods": [], "string_literals": []
    }  # fmt: skip
    assert meta["plan"]["keywords"] == {t: [] for t in meta["plan"]["transforms"]}
    skipped = {o["transform"]: o["reason"] for o in meta["apply"]["outcomes"] if o["kind"] == "skipped"}
    assert set(skipped) == set(KW_BOUND)
    assert all(r.startswith("no keyword") for r in skipped.values())
    assert filecmp.cmp(toy / "pkg" / "m0.py", tmp_path / "out" / meta["variant_id"] / "pkg" / "m0.py", shallow=False)


def test_a_dead_worker_process_is_recorded_too(toy: Path, tmp_path: Path):
    config = SamplerConfig(n=4, nt=1, seed=3, catalogue=["tests.support.exit_transform.ExitsProcess"])
    metas = sample(toy, tmp_path / "out", config, workers=2)
    assert [m["index"] for m in metas] == [0, 1, 2, 3]
    assert all("BrokenProcessPool" in m["error"] for m in metas)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(f"{m['variant_id']}.json" for m in metas)
