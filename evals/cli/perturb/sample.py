"""`repoanchor perturb sample`: N random variants of a tree (Algorithm 1 of Jagged Frontier)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console

from repoanchor.evals.cli.inputs import refuse_absent
from repoanchor.evals.cli.outputs import progress_bar

err = Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the terminal's width


def sample(
    ctx: typer.Context,
    src: Annotated[Path, typer.Argument(help="Source tree of the instance (left untouched).")],
    outdir: Annotated[Path, typer.Argument(help="Gets OUTDIR/<id>/ (a variant tree) and OUTDIR/<id>.json each.")],
    n: Annotated[int, typer.Option("-n", min=1, help="N: number of variants.")] = 1,
    issue: Annotated[Path | None, typer.Option(help="Issue text: keywords for dead-method/string-assign.")] = None,
    gold_files: Annotated[
        list[str] | None, typer.Option("--gold-files", help="Gold-patch file (relative to SRC); repeatable.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Batch seed; variant i gets a seed derived from (seed, i).")] = 0,
    nt: Annotated[int, typer.Option(help="Nt: transforms per variant.")] = 3,
    phi: Annotated[
        float, typer.Option("--fraction", "--phi", help="phi: share of candidate sites rewritten per file (apply's).")
    ] = 0.7,
    nk: Annotated[int, typer.Option(help="Nk: most keywords per keyword-bound transform.")] = 5,
    nf: Annotated[int, typer.Option(help="Nf: most files per keyword-bound transform.")] = 10,
    transform: Annotated[
        list[str] | None,
        typer.Option("--transform", "-t", help="Transform id of the catalogue drawn from; repeatable (default: all)."),
    ] = None,
    test_pattern: Annotated[
        list[str] | None, typer.Option(help="Glob of test files never touched; repeatable, replaces the default.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="litellm model for keywords (default: offline extraction).")] = None,
    api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL for --model.")] = None,
    keywords_cache: Annotated[
        Path | None, typer.Option(help="Keyword answer cache (default: $REPOANCHOR_CACHE/keywords or .cache/keywords).")
    ] = None,
    keywords_fallback: Annotated[
        Literal["error", "offline"],
        typer.Option(
            help="When --model's call or answer fails: error (stop, exit 2) or offline (use the offline extractor; "
            "recorded in each variant's metadata and printed)."
        ),
    ] = "error",
    workers: Annotated[int, typer.Option(help="Variants built in parallel processes.")] = 1,
    keyword_passes: Annotated[
        str, typer.Option(help="joint (one pass per keyword-bound transform) or per-keyword (one pass per keyword).")
    ] = "joint",
    preset: Annotated[
        str | None,
        typer.Option(help="A named protocol (`repoanchor presets list`) or preset YAML; options given here win."),
    ] = None,
):
    """Draw N random variants of SRC (Algorithm 1 of Jagged Frontier), each with one fresh commit.

    Example, the paper's protocol: repoanchor perturb sample SRC OUT --preset jagged-frontier --issue issue.txt"""
    from pydantic import ValidationError

    from repoanchor.evals.cli.errors import validation_message
    from repoanchor.perturb.sampler.build import sample as run_sampler
    from repoanchor.perturb.sampler.build import summary_row
    from repoanchor.perturb.sampler.keywords import KeywordConfig
    from repoanchor.perturb.sampler.sampler import SamplerConfig

    if issue is not None and issue.resolve().is_relative_to(src.resolve()):
        raise typer.BadParameter(f"--issue {issue} is inside SRC: it would be copied into every variant")
    refuse_absent(src, gold_files, "--gold-files")
    fields = {"n": n, "nt": nt, "phi": phi, "nk": nk, "nf": nf, "seed": seed, "gold_files": gold_files or []}
    fields |= {"catalogue": transform} if transform else {}
    fields |= {"test_patterns": test_pattern} if test_pattern else {}
    fields["keyword_passes"] = keyword_passes
    if preset:  # the protocol's settings where no option was given; recorded in each variant's metadata
        from repoanchor.evals.cli.presets import given, with_sampler_preset

        fields = with_sampler_preset(fields, preset, given(ctx))
    try:
        config = SamplerConfig(**fields)
        keyword_config = KeywordConfig(
            model=model, api_base=api_base, cache_dir=keywords_cache, fallback=keywords_fallback
        )
    except ValidationError as exc:
        raise typer.BadParameter(validation_message(exc)) from exc
    text = issue.read_text(encoding="utf-8", errors="replace") if issue else None
    try:
        with progress_bar(err) as bar:
            task = bar.add_task("sampling variants", total=config.n)
            metas = run_sampler(
                src,
                outdir,
                config,
                issue=text,
                keyword_config=keyword_config,
                workers=workers,
                on_done=lambda _meta: bar.advance(task),
            )
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    rows = [summary_row(m) for m in metas]
    failed = [r for r in rows if not r["ok"]]
    for row in failed:
        err.print(f"[red]variant {row['variant_id']} failed:[/red] {row['error']}")
    keywords = next((m["keyword_extraction"] for m in metas if m.get("keyword_extraction")), None)
    if keywords:  # where the keyword-bound transforms' names came from, never left to guess
        err.print(f"keywords: {keywords['source']} ({keywords['reason']})", highlight=False, soft_wrap=True)
    built = {"outdir": str(outdir), "built": len(rows) - len(failed), "failed": len(failed), "keywords": keywords}
    typer.echo(json.dumps({**built, "variants": rows}, indent=2))
    raise typer.Exit(1 if failed else 0)
