"""`suite build`'s selection and ablation options, turned into the library's settings and checked before
anything is built, so that a bad option is one line naming it (exit 2), never a half-built suite."""

from __future__ import annotations

from repoanchor.evals.cli.perturb import parse_options
from repoanchor.evals.suites.selection import Selection
from repoanchor.perturb.sampler.sampler import SamplerConfig
from repoanchor.perturb.transforms import SPT_IDS
from repoanchor.perturb.tree import ApplyConfig, check_options


def selection_from(
    instances: str | None, sample: int | None, stratify: str | None, seed: int, min_per_stratum: int
) -> Selection | None:
    """None when no option asks for a subset: the whole dataset, and a header like before."""
    if stratify and sample is None:
        raise ValueError("--stratify needs --sample N (how many instances to draw)")
    if instances is None and sample is None:
        return None
    columns = [column.strip() for column in (stratify or "").split(",") if column.strip()]
    return Selection(instances=instances, sample=sample, stratify=columns, seed=seed, min_per_stratum=min_per_stratum)


def ablation_settings(
    kind: str, transforms: list[str] | None, options: list[str] | None, sampler: dict
) -> tuple[dict, dict]:
    """({transforms, options} for SuiteConfig, the sampler fields): `--transform` chooses the Perturb/Extend
    transforms, or the SPT sampler's catalogue; `--option ID.KEY=VALUE` must name one of them and a key it
    reads (perturb's `option_names`), as `perturb apply` requires."""
    parsed = parse_options(options or [])
    if kind == "original" and (transforms or parsed):
        raise ValueError("--transform/--option: the original suite perturbs nothing")
    try:
        return _checked(kind, transforms, parsed, sampler)
    except ValueError as error:
        raise ValueError(f"--transform/--option: {error}") from None


def _checked(kind: str, transforms: list[str] | None, parsed: dict, sampler: dict) -> tuple[dict, dict]:
    if kind == "spt":
        catalogue = list(transforms or sampler.get("catalogue") or SPT_IDS)  # a suite's SPT default
        check_options(ApplyConfig(transforms=catalogue, options=parsed))
        if not transforms:
            return {}, {**sampler, **({"options": parsed} if parsed else {})}
        nt = sampler.get("nt", min(SamplerConfig.model_fields["nt"].default, len(catalogue)))
        return {}, {**sampler, "catalogue": catalogue, "nt": nt, **({"options": parsed} if parsed else {})}
    if not transforms and not parsed:
        return {}, sampler
    from repoanchor.evals.suites.kinds import SuiteConfig

    chosen = list(transforms or SuiteConfig.model_fields["transforms"].default_factory())
    check_options(ApplyConfig(transforms=chosen, options=parsed))
    return {"transforms": chosen, "options": parsed}, sampler
