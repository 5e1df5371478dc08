"""The random variant sampler: Algorithm 1 of the Jagged Frontier paper over the full catalogue.

For variant i (of N) a seed is derived from (seed, i) and everything else from it: Nt distinct
transforms drawn uniformly from the catalogue, p_file ~ U(0,1) per transform (each non-gold,
non-test file kept with that probability), phi of the candidate sites per file, at most Nf
files for a keyword-bound transform, and at most Nk keywords bound to it (AssignTargetNames:
dead-method takes method names, dead-string-assign string literals, from one extraction per
instance). Gold-patch files are selected by every drawn transform. Unlike the prior sampler the
draw is fully seeded, so a variant is rebuilt byte for byte from its metadata, and the variant
id is derived from its seed (no uuid). Building and writing variants (`sample`) lives in `sample_build`.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from repoanchor.perturb.sampler.keywords import Keywords
from repoanchor.perturb.source.build_files import not_project_code
from repoanchor.perturb.source.files import TEST_PATTERNS, is_test_file, python_files
from repoanchor.perturb.transforms import TRANSFORMS, get_transform_class

KEYWORD_POOLS = {"dead-method": "methods", "dead-string-assign": "string_literals"}
"""Which extracted list feeds each keyword-bound transform; any other takes string literals."""


class SamplerConfig(BaseModel):
    """Hyperparameters of Algorithm 1. Everything here is recorded in each variant's metadata."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    n: int = Field(1, ge=1)
    """N: variants to draw."""
    nt: int = Field(3, ge=1)
    """Nt: distinct transforms per variant, drawn uniformly from `catalogue`."""
    phi: float = Field(0.7, gt=0.0, le=1.0)
    """phi: share of a selected file's candidate sites rewritten (k = max(1, ceil(phi * n)))."""
    nk: int = Field(5, ge=1)
    """Nk: most keywords bound to one keyword-bound transform."""
    nf: int = Field(10, ge=1)
    """Nf: most files a keyword-bound transform rewrites (gold files are kept first)."""
    seed: int = 0
    """Seed of the batch; variant i uses `variant_seed(seed, i)`."""
    catalogue: list[str] = Field(default_factory=lambda: list(TRANSFORMS))
    """Transform ids drawn from: the 14 SPTs and the 3 RepoMirage perturbations by default."""
    gold_files: list[str] = Field(default_factory=list)
    """Files of the gold patch (relative to the source root): every drawn transform selects them."""
    test_patterns: list[str] = Field(default_factory=lambda: list(TEST_PATTERNS))
    """Globs of test files, never touched; override per repository."""
    options: dict[str, dict] = Field(default_factory=dict)
    """Per-transform hyperparameters passed through (`ApplyConfig.options`)."""
    check_interpreters: bool = True
    """Also compile changed files under the oldest and newest supported Pythons installed."""
    keyword_passes: Literal["joint", "per-keyword"] = "joint"
    """Keyword-bound transforms: one pass holding all their keywords, capped at Nf files (joint), or, as the
    Jagged Frontier code does, one pass per keyword, each drawing its own files with the same p_file and each
    capped at Nf (`per-keyword`; the passes are `ID@0`, `ID@1`, ... in the variant's metadata)."""
    preset: dict | None = None
    """The named protocol (`repoanchor presets show`) these settings came from, recorded as given."""

    @model_validator(mode="after")
    def _check(self) -> SamplerConfig:
        if len(set(self.catalogue)) != len(self.catalogue):
            raise ValueError("catalogue lists a transform twice")
        unknown = [t for t in self.catalogue if t not in TRANSFORMS and "." not in t]
        if unknown:
            raise ValueError(f"unknown transform ids {unknown}; known: {', '.join(TRANSFORMS)}")
        if self.nt > len(self.catalogue):
            raise ValueError(f"nt={self.nt} exceeds the catalogue size {len(self.catalogue)}")
        gold = {PurePosixPath(f.replace("\\", "/")) for f in self.gold_files}
        if any(g.is_absolute() or ".." in g.parts for g in gold):
            raise ValueError("gold files must be paths relative to the source root, without '..'")
        self.gold_files = sorted(g.as_posix() for g in gold)
        return self


def variant_seed(seed: int, index: int) -> int:
    """A 64-bit seed for variant `index`: independent of N, of other variants and of the order built."""
    digest = hashlib.sha256(f"repoanchor.sampler/1|{seed}|{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def variant_id(seed: int) -> str:
    """12 hex digits naming the variant's folder; reveals nothing of the seed."""
    return hashlib.sha256(f"repoanchor.variant/1|{seed}".encode()).hexdigest()[:12]


@dataclass
class VariantPlan:
    """The random decisions of one variant, drawn before anything is built."""

    index: int
    seed: int
    id: str
    transforms: list[str]
    p_file: dict[str, float]
    keyword_bound: list[str]
    keywords: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "transforms": self.transforms,
            "p_file": self.p_file,
            "keyword_bound": self.keyword_bound,
            "keywords": self.keywords,
        }


def draw_plan(config: SamplerConfig, index: int) -> VariantPlan:
    """Lines 9-11 of Algorithm 1: RandomSelect(T, Nt) and p_file(t) ~ U(0,1), from the variant's RNG."""
    seed = variant_seed(config.seed, index)
    rng = random.Random(f"plan|{seed}")
    transforms = rng.sample(config.catalogue, config.nt)
    p_file = {t: rng.random() for t in transforms}
    bound = [t for t in transforms if _keyword_bound(t)]
    return VariantPlan(index, seed, variant_id(seed), transforms, p_file, bound)


def _keyword_bound(transform: str) -> bool:
    try:
        return get_transform_class(transform).keyword_bound
    except ValueError:  # not loadable: that variant's build fails and records why; the others go on
        return False


def assign_target_names(plan: VariantPlan, keywords: Keywords, nk: int) -> None:
    """AssignTargetNames: up to Nk distinct keywords per keyword-bound transform, drawn from its pool.

    A transform with an empty pool keeps an empty list, which `apply_tree` reports as a skip."""
    rng = random.Random(f"keywords|{plan.seed}")
    for transform in plan.keyword_bound:
        pool = list(getattr(keywords, KEYWORD_POOLS.get(transform, "string_literals")))
        plan.keywords[transform] = rng.sample(pool, min(nk, len(pool)))


@dataclass
class Batch:
    """Inputs shared by every variant of one instance, resolved once."""

    src: Path
    outdir: Path
    config: SamplerConfig
    gold: list[str]
    gold_ignored: list[dict]
    issue_sha256: str | None
    keywords: Keywords | None = None


def prepare(src: Path, outdir: Path, config: SamplerConfig, issue: str | None) -> Batch:
    """Resolve paths and gold files; refuse an OUTDIR inside SRC (variants would be sampled too)."""
    src, outdir = src.resolve(), outdir.resolve()
    if not src.is_dir():
        raise ValueError(f"source tree {src} is not a directory")
    if outdir.is_relative_to(src):
        raise ValueError(f"output folder {outdir} is inside the source tree {src}")
    files, _ = python_files(src, test_patterns=tuple(config.test_patterns))
    present = set(files)
    gold, ignored = [], []
    for rel in config.gold_files:
        if rel in present:
            gold.append(rel)
        else:
            ignored.append({"file": rel, "reason": _gold_reason(src, rel, config)})
    digest = hashlib.sha256(issue.encode()).hexdigest() if issue else None
    return Batch(src, outdir, config, gold, ignored, digest)


def _gold_reason(src: Path, rel: str, config: SamplerConfig) -> str:
    if is_test_file(rel, tuple(config.test_patterns)):
        return "test file: never transformed"
    if not rel.endswith(".py"):
        return "not a Python file"
    if not (src / rel).exists():
        return "not found in the source tree"
    if why := not_project_code(src, rel):
        return f"{why}: never transformed by the sampler"
    return "not a regular Python file of the tree (symlink, or in a skipped folder)"
