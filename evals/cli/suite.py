"""`repoanchor suite build|validate`: task suites from a SWE-bench-format dataset, and their re-check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from repoanchor.evals.cli.ray_options import RayAddress
from repoanchor.evals.cli.suite_images import images

app = typer.Typer(
    help="Build and validate task suites (RepoMirage-Perturb, RepoMirage-Extend, SPT variants).",
    no_args_is_help=True,
)


VENV_CACHE_HELP = (
    "Cache of per-repo/version test venvs. A swebench spec's unpinned dependencies resolve as released by the "
    "instance's environment_setup_commit date (REPOANCHOR_DEPS_AS_OF=none for today's, or a date)."
)


REFUSED_SHOWN = 20
"""Refused rows a dry run lists (each with its line or row, id and reason); the count says how many in all."""


@app.command()
def build(
    ctx: typer.Context,
    dataset: Annotated[
        str, typer.Argument(help="SWE-bench-format dataset: parquet, JSONL, JSON, save_to_disk folder or HF id.")
    ],
    suite: Annotated[
        Literal["perturb", "spt", "extend", "original"],
        typer.Option("--suite", help="perturb | spt | extend | original (the unperturbed tasks, for pairing)."),
    ] = "perturb",
    out: Annotated[
        Path, typer.Option("--out", help="Suite folder to write (or to resume: rerun the same command).")
    ] = Path("suite"),
    repo_cache: Annotated[
        Path | None,
        typer.Option("--repo-cache", envvar="REPOANCHOR_REPO_CACHE", help="Folder of git clones named owner__name."),
    ] = None,
    provider: Annotated[
        Literal["local", "image"],
        typer.Option(
            help="Where every variant's and Extend task's tests, imports and probes run: local (a checkout and venv "
            "per instance, on the host, isolated) or image (a network-less container of the instance's environment "
            "image, built first with `repoanchor images build`; recorded per instance in the manifest)."
        ),
    ] = "local",
    seed: Annotated[int, typer.Option(help="Suite seed; per-instance seeds derive from it and the instance id.")] = 0,
    variants: Annotated[int, typer.Option("--variants", help="spt: sampler variants per instance.")] = 2,
    workers: Annotated[int, typer.Option(help="Instances built in parallel (one process each).")] = 1,
    other_rate: Annotated[
        float, typer.Option("--other-rate", help="perturb/extend: share of non-gold modules perturbed too.")
    ] = 0.3,
    fraction: Annotated[float, typer.Option(help="perturb/extend: share of candidate sites rewritten (phi).")] = 0.7,
    sampler: Annotated[
        str | None, typer.Option(help="spt: JSON (or file) of SamplerConfig fields, e.g. '{\"nt\": 2}'.")
    ] = None,
    extend: Annotated[
        str | None,
        typer.Option(
            help='extend: JSON (or file) of FamiliesConfig fields; add "assign": {"proxy_k": K, "constant_k": K} '
            "to keep one family per instance by the paper's rules (default: every family is built)."
        ),
    ] = None,
    venv_cache: Annotated[Path | None, typer.Option(help=VENV_CACHE_HELP)] = None,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds allowed for one test run.")] = 1800.0,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    instances: Annotated[
        list[str] | None,
        typer.Option(
            help="Only these instances: ids 'a,b' (or the option repeated), 're:PATTERN' (re.match on the id) "
            "or a slice '0:50'."
        ),
    ] = None,
    sample: Annotated[int | None, typer.Option(help="Draw N of the (filtered) instances, stratified.")] = None,
    stratify: Annotated[
        str | None, typer.Option(help="--sample strata: row columns, outermost first, e.g. 'repo,difficulty'.")
    ] = None,
    sample_seed: Annotated[int | None, typer.Option(help="Seed of the --sample draw (default: --seed).")] = None,
    min_per_stratum: Annotated[
        int, typer.Option(help="--sample: each outermost stratum first gets this many (or all it has).")
    ] = 0,
    transform: Annotated[
        list[str] | None,
        typer.Option("--transform", "-t", help="perturb/extend: the transforms applied; spt: the sampler's catalogue."),
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option(help="Transform option ID.KEY=VALUE, e.g. proxy-imports.depth=6; repeatable.")
    ] = None,
    keywords_model: Annotated[
        str | None, typer.Option(help="spt: litellm model naming the keywords (default: offline extraction).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the selection (ids, allocation table) and build nothing.")
    ] = False,
    preset: Annotated[
        str | None,
        typer.Option(help="A named protocol (`repoanchor presets list`) or preset YAML; options given here win."),
    ] = None,
    executor: Annotated[
        Literal["local", "ray"],
        typer.Option(help="local (--workers processes here) or ray (each instance a Ray task; no shared folders)."),
    ] = "local",
    address: RayAddress = None,
) -> None:
    """Build a suite: per instance, perturb the repository, remap the gold patch, validate by tests.

    Example, a reproducible stratified subset and a one-transform ablation:
    repoanchor suite build verified.parquet --suite perturb -t proxy-imports --option proxy-imports.depth=6
    --sample 50 --stratify repo,difficulty --seed 3 --out suites/proxy50

    Each task's repository is a fresh one-commit git repo holding no patch, test patch, metadata or
    seed; ground truth goes to SUITE/ground_truth/, rejected instances with their reasons to
    SUITE/rejected.jsonl, hashes and versions to SUITE/manifest.json. An interrupted build resumes
    where it stopped when rerun with the same arguments, and ends byte-identical to an unbroken one.
    """
    from repoanchor.evals.cli.errors import report
    from repoanchor.evals.cli.presets import given, load_or_exit
    from repoanchor.evals.cli.suite_options import (
        ablation_settings,
        check_executor,
        exit_if_no_task,
        json_option,
        selection_from,
        with_preset,
    )  # fmt: skip
    from repoanchor.evals.presets.model import record
    from repoanchor.evals.suites.build import build_suite, rejection_summary
    from repoanchor.evals.suites.kinds import SuiteConfig
    from repoanchor.evals.suites.selection import SelectionError, select_load

    try:
        check_executor(executor, address, venv_cache)
        chosen = selection_from(instances, sample, stratify, seed if sample_seed is None else sample_seed,
                                min_per_stratum)  # fmt: skip
        values = {"variants": variants, "other_rate": other_rate, "fraction": fraction, "transform": transform,
                  "option": option, "sampler": json_option(sampler, "--sampler") or {},
                  "extend": json_option(extend, "--extend")}  # fmt: skip
        protocol = load_or_exit(preset) if preset else None
        if protocol:  # the preset's settings where no option was given
            values = with_preset(values, protocol, suite, given(ctx))
        chosen_settings, sampler_fields = ablation_settings(suite, values["transform"], values["option"],
                                                            values["sampler"])  # fmt: skip
        config = None if suite == "original" else SuiteConfig(
            kind=suite,
            seed=seed,
            n_variants=values["variants"],
            other_file_rate=values["other_rate"],
            fraction=values["fraction"],
            sampler=sampler_fields,
            extend=values["extend"],
            timeout=timeout,
            keywords={"model": keywords_model} if keywords_model else None,
            **chosen_settings,
        )  # fmt: skip
        if dry_run:  # what would be built: the chosen instances and the settings, nothing written
            from repoanchor.evals.harness.datasets import load_dataset

            loaded = load_dataset(dataset)
            selected = select_load(loaded, chosen)[1]
            plan = {"selection": selected, "config": config.model_dump(mode="json") if config else None}
            plan |= {"preset": record(protocol)} if protocol else {}
            plan |= {
                "refused_rows": len(loaded.errors),
                "refused": [str(error) for error in loaded.errors[:REFUSED_SHOWN]],
            }
            typer.echo(json.dumps(plan, indent=1))
            loaded.require_rows()  # a dataset of no usable row stops here as the build would: exit 2, saying why
            return
    except (SelectionError, ValueError) as error:  # a pydantic error too: one line naming the field
        raise typer.Exit(report(error)) from error
    if config is None:  # the original suite: the dataset's own tasks as one-commit repositories, nothing to validate
        from repoanchor.evals.suites.original import build_original_suite

        if executor == "ray":  # no test runs: nothing worth sending to a cluster
            typer.echo("note: --suite original is built here (it runs no tests); --executor ray is ignored", err=True)

        recorded = record(protocol) if protocol else None
        manifest = build_original_suite(dataset, out, repo_cache=repo_cache, selection=chosen, preset=recorded)
        typer.echo(json.dumps(manifest, indent=2))
        return

    report = build_suite(
        dataset, config.kind, out, provider=provider, repo_cache=repo_cache, workers=workers,
        cache_dir=venv_cache, config=config, progress=progress, selection=chosen,
        preset=record(protocol) if protocol else None, executor=executor, address=address,
    )  # fmt: skip
    summary = {k: str(v) if isinstance(v, Path) else v for k, v in vars(report).items()}
    summary["rejections"] = rejection_summary(report.out)
    typer.echo(json.dumps(summary, indent=2))
    exit_if_no_task(report, dataset, summary)


@app.command()
def validate(
    suite: Annotated[Path, typer.Argument(help="A suite folder written by `suite build`.")],
    workers: Annotated[int, typer.Option(help="Tasks validated in parallel.")] = 1,
    venv_cache: Annotated[Path | None, typer.Option(help=VENV_CACHE_HELP)] = None,
    provider: Annotated[
        Literal["local", "image", "auto"],
        typer.Option(
            help="Where each task's tests (and Extend probes) run: local (a checkout and venv, on the host, "
            "isolated), image (a network-less container of the task's environment image, see `repoanchor images "
            "build`) or auto (image where one is built, else local, and said)."
        ),
    ] = "local",
    executor: Annotated[
        Literal["local", "ray"],
        typer.Option(help="local (--workers processes here) or ray (each task a Ray task; no shared folders)."),
    ] = "local",
    address: RayAddress = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar (local executor).")] = True,
) -> None:
    """Re-run every task's validation from the suite folder alone; exit 1 if any task fails.

    Checks the manifest's hashes, then levels 1 and 3 (Perturb, SPT: FAIL_TO_PASS fail and
    PASS_TO_PASS pass before the remapped gold patch, all pass after) or the family validator on
    the ground-truth solution (Extend). Prints a JSON summary.
    """
    from repoanchor.evals.cli.suite_options import check_executor
    from repoanchor.evals.harness.tasks import TaskError
    from repoanchor.evals.suites.check import validate_suite

    try:
        check_executor(executor, address, venv_cache)
        summary = validate_suite(
            suite,
            workers=workers,
            cache_dir=venv_cache,
            provider=provider,
            executor=executor,
            address=address,
            progress=progress,
        )
    except (TaskError, ValueError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    typer.echo(json.dumps(summary, indent=2))
    if not summary["tasks"]:
        typer.echo(f"error: {suite} holds no task: nothing was validated", err=True)
    raise typer.Exit(0 if summary["ok"] else 1)


app.command()(images)
