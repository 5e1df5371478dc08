"""`import_runs(source, out, ...)`: detect which harness wrote `source`, read it, write our run layout."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from repoanchor.evals.interop.imports import mini_batch, openhands, swe_agent
from repoanchor.evals.interop.imports.layout import write_layout
from repoanchor.evals.interop.imports.runs import Batch, SourceError

READERS: dict[str, tuple[Callable[[Path], bool], Callable[[Path], Batch]]] = {
    "mini-swe-agent": (mini_batch.looks_like, mini_batch.read_mini_batch),
    "swe-agent": (swe_agent.looks_like, swe_agent.read_swe_agent),
    "openhands": (openhands.looks_like, openhands.read_openhands),
}
"""Format name -> (does this source look like it, read it). Detection tries them in this order."""


def detect(source: Path) -> str:
    found = [name for name, (looks_like, _) in READERS.items() if looks_like(source)]
    if len(found) != 1:
        what = "runs of several harnesses" if found else "no runs of a known harness"
        raise SourceError(
            f"{source}: {what} (mini-swe-agent: *.traj.json; SWE-agent: *.traj; OpenHands: an output.jsonl or the "
            "folder holding it); "
            f"pass --format {'|'.join(READERS)}"
        )
    return found[0]


def import_runs(
    source: Path, out: Path, *, format: str = "auto", suites: list[Path] = (), model: str | None = None,
    condition: str = "plain", grades: Path | None = None,
) -> dict:  # fmt: skip
    """Read the runs at `source` and write them under `out`; the summary (also OUT/import.json)."""
    source = Path(source)
    if not source.exists():
        raise SourceError(f"{source}: no such file or folder")
    name = detect(source) if format == "auto" else format
    if name not in READERS:
        raise SourceError(f"--format {format!r}: choose auto or one of {', '.join(READERS)}")
    if not READERS[name][0](source):
        raise SourceError(f"{source}: holds no {name} run (`repoanchor import --help` says what each format reads)")
    batch = READERS[name][1](source)
    if not batch.runs:
        problems = "; ".join(batch.problems[:3])
        raise SourceError(f"{source}: no {name} run could be read" + (f" ({problems})" if problems else ""))
    summary = write_layout(batch, out, suites=list(suites), model=model, condition=condition, grades=grades)
    return {"source": str(source), "format": name, **summary}
