"""Typed outcomes of applying a transformation to one file: Applied | Skipped | Failed.

Nothing is swallowed: every (transform, file) pair that was considered ends in exactly one
of these, and site-level refusals are Skipped records of their own. They are plain frozen
dataclasses so that they cross process boundaries and serialise to JSON unchanged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

SNIPPET_CHARS = 400


def snippet(code: str) -> str:
    """A bounded excerpt of code for metadata: long snippets keep their head and tail, in whole lines where
    a line ends within them (a longer line is cut)."""
    code = code.strip("\n")
    if len(code) <= SNIPPET_CHARS:
        return code
    half = SNIPPET_CHARS // 2
    head, tail = code[:half], code[-half:]
    if "\n" in head:
        head = head[: head.rindex("\n")]
    if "\n" in tail:
        tail = tail[tail.index("\n") + 1 :]
    return f"{head}\n...\n{tail}"


@dataclass(frozen=True)
class SiteRecord:
    """One rewritten node: where it was (scope path within the file) and what it became."""

    where: str
    before: str
    after: str


@dataclass(frozen=True)
class Applied:
    transform: str
    file: str
    sites: tuple[SiteRecord, ...] = field(default_factory=tuple)
    kind: str = "applied"


@dataclass(frozen=True)
class Skipped:
    transform: str
    file: str
    reason: str
    where: str = ""
    kind: str = "skipped"


@dataclass(frozen=True)
class Failed:
    transform: str
    file: str
    error: str
    kind: str = "failed"


Outcome = Applied | Skipped | Failed


def outcome_to_dict(outcome: Outcome) -> dict:
    return asdict(outcome)


def outcome_from_dict(data: dict) -> Outcome:
    kind = data["kind"]
    if kind == "applied":
        sites = tuple(SiteRecord(**s) for s in data["sites"])
        return Applied(transform=data["transform"], file=data["file"], sites=sites)
    if kind == "skipped":
        return Skipped(data["transform"], data["file"], data["reason"], data.get("where", ""))
    if kind == "failed":
        return Failed(data["transform"], data["file"], data["error"])
    raise ValueError(f"unknown outcome kind {kind!r}")


def summarize(outcomes: list[Outcome]) -> dict:
    """Counts per transform: files applied, sites applied, skips by reason, failures."""
    summary: dict[str, dict] = {}
    for outcome in outcomes:
        entry = summary.setdefault(
            outcome.transform, {"files_applied": 0, "sites_applied": 0, "skipped": Counter(), "failed": 0}
        )
        if isinstance(outcome, Applied):
            entry["files_applied"] += 1
            entry["sites_applied"] += len(outcome.sites)
        elif isinstance(outcome, Skipped):
            entry["skipped"][_reason_class(outcome.reason)] += 1
        else:
            entry["failed"] += 1
    for entry in summary.values():
        entry["skipped"] = dict(sorted(entry["skipped"].items()))
    return dict(sorted(summary.items()))


def nothing_rewritten(outcomes: list[Outcome]) -> str | None:
    """Why no site was rewritten (a variant equal to its original), or None when some pass applied."""
    if any(isinstance(outcome, Applied) and outcome.sites for outcome in outcomes):
        return None
    if not outcomes:
        return "no transform reached any file"
    parts = []
    for transform, entry in summarize(outcomes).items():
        reasons = [f"{reason} ({count})" for reason, count in entry["skipped"].items()]
        reasons += [f"failed ({entry['failed']})"] if entry["failed"] else []
        parts.append(f"{transform}: {', '.join(reasons) or 'no site'}")
    return "no site was rewritten: " + "; ".join(parts)


def _reason_class(reason: str) -> str:
    """Group reasons by their stable prefix (text before the first colon)."""
    return reason.split(":", 1)[0]
