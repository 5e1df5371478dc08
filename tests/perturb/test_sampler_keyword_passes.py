"""Keyword-bound transforms in the sampler: one joint pass capped at Nf files (our default), or one pass per
keyword, each drawing its own files and each capped at Nf (the Jagged Frontier code's `_assign_target_names`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoanchor.perturb.filepass import select_files
from repoanchor.perturb.sampler.build import apply_config
from repoanchor.perturb.sampler.sampler import SamplerConfig, draw_plan, prepare
from repoanchor.perturb.tree import apply_tree
from tests.support.trees import make_tree

MODULE = "def work(x):\n    y = x + 1\n    z = y * 2\n    return z\n"
KEYWORDS = ["alpha marker", "beta marker", "gamma marker"]


def _variant(tmp_path: Path, mode: str, transform: str = "dead-string-assign", nf: int = 2):
    src = make_tree(tmp_path / "src", {f"pkg/m{i}.py": MODULE for i in range(8)})
    config = SamplerConfig(nt=1, nf=nf, catalogue=[transform], keyword_passes=mode, check_interpreters=False)
    batch = prepare(src, tmp_path / "out", config, None)
    plan = draw_plan(config, 0)
    plan.p_file = {transform: 1.0}  # every file drawn: only the Nf cap limits the selection
    plan.keywords = {transform: list(KEYWORDS)}
    return src, apply_config(batch, plan, 1)


@pytest.mark.parametrize(
    ("mode", "passes"),
    [
        ("joint", ["dead-string-assign"]),
        ("per-keyword", ["dead-string-assign@0", "dead-string-assign@1", "dead-string-assign@2"]),
    ],
)
def test_passes_and_their_caps(tmp_path, mode, passes):
    src, config = _variant(tmp_path, mode)
    assert config.transforms == passes
    assert config.max_files == dict.fromkeys(passes, 2)
    expected_words = [KEYWORDS] if mode == "joint" else [[word] for word in KEYWORDS]
    assert [config.transform_keywords[name] for name in passes] == expected_words
    files = [f"pkg/m{i}.py" for i in range(8)]
    selections = [select_files(files, name, config) for name in passes]
    assert all(len(chosen) == 2 for chosen in selections)  # each pass capped at Nf


def test_three_keywords_give_three_passes_each_capped_at_nf(tmp_path):
    src, config = _variant(tmp_path, "per-keyword")
    out = tmp_path / "variant"
    apply_tree(src, out, config)
    holders = {word: {p.name for p in out.rglob("*.py") if f'"{word}"' in p.read_text()} for word in KEYWORDS}
    assert all(len(files) == 2 for files in holders.values()), holders  # Nf = 2 files per keyword
    assert len(set().union(*holders.values())) > 2  # the passes draw their own files: more than Nf in all


def test_the_joint_pass_caps_all_keywords_together(tmp_path):
    src, config = _variant(tmp_path, "joint")
    out = tmp_path / "variant"
    apply_tree(src, out, config)
    touched = {p.name for p in out.rglob("*.py") if any(f'"{word}"' in p.read_text() for word in KEYWORDS)}
    assert len(touched) == 2


def test_dead_method_passes_work_per_keyword_too(tmp_path):
    _, config = _variant(tmp_path, "per-keyword", transform="dead-method", nf=3)
    assert config.transforms == ["dead-method@0", "dead-method@1", "dead-method@2"]
    assert config.max_files == {"dead-method@0": 3, "dead-method@1": 3, "dead-method@2": 3}
