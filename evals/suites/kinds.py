"""The three suite kinds, per instance: Perturb (RepoMirage on the gold files and a share of the
others), SPT (N variants from the random sampler) and Extend (the Perturb variant, then the four
structural task families of `evals.suites.extend`).

Seeds are derived per (suite seed, kind, instance), so an instance's tasks do not depend on which
other instances the dataset holds or in what order they are built. Extend uses the Perturb seed:
its tasks are cut from the very repository the Perturb suite gives the agent.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from repoanchor.evals.harness import eval_script
from repoanchor.evals.suites.instance import Work, build_task, instance_seed
from repoanchor.evals.suites.remap import Rejected
from repoanchor.perturb.sampler import sampler
from repoanchor.perturb.sampler.build import apply_config
from repoanchor.perturb.sampler.keywords import KeywordConfig, KeywordError, extract_keywords
from repoanchor.perturb.transforms import REPOMIRAGE_IDS, SPT_IDS
from repoanchor.perturb.tree import ApplyConfig
from repoanchor.scaffolds.records import InfraError

Kind = Literal["perturb", "spt", "extend"]


class SuiteConfig(BaseModel):
    """Everything that decides a suite's content; recorded in its manifest, checked on resume."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kind: Kind
    seed: int = 0
    """Suite seed; each instance's seed is derived from it and the instance id."""
    other_file_rate: float = Field(0.3, ge=0.0, le=1.0)
    """Perturb/Extend: probability that a non-gold, non-test module is perturbed too, so that the
    perturbation does not point at the files to fix."""
    fraction: float = Field(0.7, gt=0.0, le=1.0)
    """Perturb/Extend: share of a selected module's candidate sites rewritten (phi)."""
    transforms: list[str] = Field(default_factory=lambda: list(REPOMIRAGE_IDS))
    """Perturb/Extend: the transforms applied."""
    options: dict[str, dict] = Field(default_factory=dict)
    """Per-transform options, e.g. {"proxy-imports": {"depth": 4}}."""
    n_variants: int = Field(2, ge=1)
    """SPT: variants per instance."""
    sampler: dict = Field(default_factory=dict)
    """SPT: further SamplerConfig fields (nt, phi, nk, nf, catalogue)."""
    keywords: dict | None = None
    """SPT: KeywordConfig fields for the keyword-bound transforms; None = offline extraction."""
    extend: dict | None = None
    """Extend: FamiliesConfig fields; None = all four families with their defaults."""
    check_interpreters: bool = True
    """Also compile changed files under the oldest and newest supported Pythons installed."""
    timeout: float = Field(1800.0, gt=0)
    """Seconds allowed for one test run."""

    @field_validator("sampler")
    @classmethod
    def _sampler_fields(cls, fields: dict) -> dict:
        # Checked here, before any instance is built: a misspelt key used to reject every instance, exit 0.
        return known_keys(fields, sampler.SamplerConfig.model_fields, "sampler")

    @field_validator("extend")
    @classmethod
    def _extend_fields(cls, fields: dict | None) -> dict | None:
        from repoanchor.evals.suites.extend.models import FamiliesConfig

        return None if fields is None else known_keys(fields, [*FamiliesConfig.model_fields, "assign"], "extend")


def known_keys(fields: dict, valid, what: str) -> dict:
    unknown = sorted(set(fields) - set(valid))
    if unknown:
        raise ValueError(f"unknown {what} field(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
    return fields


def build_perturb(work: Work, config: SuiteConfig) -> None:
    """One task per instance, named like the instance: the original issue on the perturbed repository."""
    seed = instance_seed(config.seed, "perturb", work.row["instance_id"])
    build_task(work, work.row["instance_id"], mirage_config(work, config, seed), {"seeds": _seeds(config, seed)})


def mirage_config(work: Work, config: SuiteConfig, seed: int) -> ApplyConfig:
    return ApplyConfig(
        transforms=list(config.transforms),
        fraction=config.fraction,
        file_fraction=config.other_file_rate,
        targets=work.gold_files(),
        seed=seed,
        workers=1,  # instances already run in parallel; nested pools would only oversubscribe
        check_interpreters=config.check_interpreters,
        options={k: v for k, v in suite_options(config.options, work.row).items() if k in config.transforms},
        python=work.python_version,
    )


SUITE_OPTIONS = {"runtime-target-masking": {"collection": "pytest-options"}}
"""Defaults a suite gives the transforms (the config's options override them): a task's tests are the
instance's test command, so only pytest's own options can make it collect every module."""


def suite_options(options: dict[str, dict], row: dict | None = None) -> dict[str, dict]:
    """The transforms' options for an instance: the suite's defaults, the instance's test command (masking
    refuses where it collects every module, e.g. `--doctest-modules`), then the config's own."""
    merged = {name: dict(values) for name, values in SUITE_OPTIONS.items()}
    command = _test_command(row) if row else None
    if command:
        merged["runtime-target-masking"]["test_command"] = command
    for name, values in options.items():
        merged[name] = {**merged.get(name, {}), **values}
    return merged


def _test_command(row: dict) -> str | None:
    try:
        return eval_script.command_for(row)
    except InfraError:  # no command known: the tree's own pytest configuration still counts
        return None


def build_spt(work: Work, config: SuiteConfig) -> None:
    """N variants drawn by Algorithm 1, gold files always selected; task i is `<instance>__spt-<i>`."""
    seed = instance_seed(config.seed, "spt", work.row["instance_id"])
    settings = {"catalogue": list(SPT_IDS), **config.sampler}
    sampler_config = sampler.SamplerConfig(
        n=config.n_variants,
        seed=seed,
        gold_files=work.gold_files(),
        check_interpreters=config.check_interpreters,
        **settings,
    )
    issue = work.row["problem_statement"]
    batch = sampler.prepare(work.original, work.root / "spt", sampler_config, issue)
    plans = [sampler.draw_plan(sampler_config, index) for index in range(config.n_variants)]
    if any(plan.keyword_bound for plan in plans):  # one extraction per instance, as the sampler does
        try:
            batch.keywords = extract_keywords(issue, KeywordConfig(**config.keywords) if config.keywords else None)
        except KeywordError as error:  # the model asked for failed and no fallback was chosen
            raise Rejected("keywords", str(error)) from None
        for plan in plans:
            sampler.assign_target_names(plan, batch.keywords, sampler_config.nk)
    for plan in plans:
        seeds = {**_seeds(config, plan.seed), "instance_seed": seed, "variant_index": plan.index}
        truth = {
            "seeds": seeds,
            "plan": plan.to_dict(),
            "keywords": batch.keywords.to_dict() if batch.keywords else None,
        }
        task_id = f"{work.row['instance_id']}__spt-{plan.index}"
        build_task(work, task_id, apply_config(batch, plan, 1), truth, repoanchor_variant=plan.id)


def _seeds(config: SuiteConfig, variant_seed: int) -> dict:
    return {"suite_seed": config.seed, "variant_seed": variant_seed}


def build_extend(work: Work, config: SuiteConfig) -> None:
    from repoanchor.evals.suites.extend.suite import build_extend_from_perturb

    build_perturb(work, config)
    build_extend_from_perturb(work, config)


BUILDERS = {"perturb": build_perturb, "spt": build_spt, "extend": build_extend}
