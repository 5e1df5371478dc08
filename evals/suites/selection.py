"""Which dataset instances a suite is built from: an id filter, then an optional stratified sample.

`instances` takes what the SWE-bench harness and mini-swe-agent take: comma-separated ids, `re:PATTERN`
(`re.match` on the id, as mini-swe-agent filters) or a Python slice of the dataset order (`0:50`, `-10:`).
`sample` then draws N of the remaining rows, stratified by row columns (`repo`, `difficulty`): the sample is
split over the first column's values in proportion to their sizes by largest remainder, each share over the
next column's values the same way, and so on, so every level is within one of its exact proportional share.
The draw inside a stratum comes from its own `random.Random`, seeded by (seed, stratum), so the same seed
gives the same ids whatever else the dataset holds in other strata, and the record says how each was drawn.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field

SLICE = re.compile(r"^(-?\d*):(-?\d*)(?::(-?\d*))?$")
MISSING = "<missing>"


class SelectionError(ValueError):
    """A selection that names nothing usable; the message names the option and why."""


class Selection(BaseModel):
    """How a suite's instances are chosen from its dataset; recorded in the manifest with the ids chosen."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    instances: str | None = None
    """Ids `a,b`, `re:PATTERN` or a slice `0:50` of the dataset order; None = every row."""
    sample: int | None = Field(None, ge=1)
    """Draw this many of the filtered rows; None = keep them all."""
    stratify: list[str] = Field(default_factory=list)
    """Row columns the sample is stratified by, outermost first (e.g. repo, difficulty)."""
    seed: int = 0
    """Seed of the within-stratum draws."""
    min_per_stratum: int = Field(0, ge=0)
    """Each outermost stratum first gets this many (or all it has), the rest is shared in proportion."""


def select(rows: list[dict], selection: Selection) -> tuple[list[dict], dict]:
    """(the chosen rows in dataset order, the record: settings, allocation table and ids)."""
    chosen = filter_instances(rows, selection.instances)
    record = selection.model_dump(mode="json")
    if selection.sample is not None:
        chosen, record["allocation"] = stratified_sample(chosen, selection)
    record["ids"] = [row["instance_id"] for row in chosen]
    return chosen, record


def joined_instances(values: list[str] | None) -> str | None:
    """`--instances` given once or repeated: repeats of id lists join into one list; a pattern or a slice must
    be the only value (a repeat used to replace the earlier ones without a word)."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    alone = [value for value in values if value.strip().startswith("re:") or SLICE.match(value.strip())]
    if alone:
        raise SelectionError(f"--instances: {alone[0]!r} must be given alone; repeat --instances only with ids")
    return ",".join(value.strip() for value in values)


def filter_instances(rows: list[dict], spec: str | None) -> list[dict]:
    if spec is None or not spec.strip():
        return list(rows)
    spec = spec.strip()
    if spec.startswith("re:"):
        try:
            pattern = re.compile(spec[3:])
        except re.error as error:
            raise SelectionError(f"--instances: {spec[3:]!r} is not a regular expression ({error})") from None
        chosen = [row for row in rows if pattern.match(row["instance_id"])]
        if not chosen:
            raise SelectionError(f"--instances: no instance id matches {spec[3:]!r}")
        return chosen
    if match := SLICE.match(spec):
        bounds = [int(part) if part else None for part in match.groups()]
        if bounds[2] == 0:
            raise SelectionError(f"--instances: slice {spec!r} has step 0")
        return rows[slice(*bounds)]
    return _by_ids(rows, [part.strip() for part in spec.split(",") if part.strip()])


def _by_ids(rows: list[dict], ids: list[str]) -> list[dict]:
    known = {row["instance_id"] for row in rows}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise SelectionError(f"--instances: not in the dataset: {', '.join(unknown)}")
    wanted = set(ids)
    return [row for row in rows if row["instance_id"] in wanted]


def stratified_sample(rows: list[dict], selection: Selection) -> tuple[list[dict], list[dict]]:
    """(the sampled rows in dataset order, one allocation row per innermost stratum)."""
    size = selection.sample
    if size > len(rows):
        raise SelectionError(f"--sample {size}: only {len(rows)} instance(s) to draw from")
    for column in selection.stratify:
        if any(column not in row for row in rows):
            raise SelectionError(f"--stratify: column {column!r} is missing from some row of the dataset")
    counts = allocate(rows, selection.stratify, size, selection.min_per_stratum)
    strata = _strata(rows, selection.stratify)
    picked: set[str] = set()
    table = []
    for key in sorted(strata):
        ids = sorted(row["instance_id"] for row in strata[key])
        rng = random.Random(f"repoanchor.selection/1|{selection.seed}|{'|'.join(key)}")
        drawn = rng.sample(ids, counts[key])
        picked.update(drawn)
        stratum = dict(zip(selection.stratify, key, strict=True))
        table.append({"stratum": stratum, "available": len(ids), "chosen": counts[key]})
    return [row for row in rows if row["instance_id"] in picked], table


def _strata(rows: list[dict], columns: list[str]) -> dict[tuple[str, ...], list[dict]]:
    groups: dict[tuple[str, ...], list[dict]] = defaultdict(list)
    for row in rows:
        groups[tuple(_value(row.get(column)) for column in columns)].append(row)
    return groups


def _value(value) -> str:
    return MISSING if value is None else str(value)


def allocate(rows: list[dict], columns: list[str], size: int, minimum: int = 0) -> dict[tuple[str, ...], int]:
    """How many rows each innermost stratum gives: nested largest-remainder allocation, outermost column first."""
    if not columns:
        return {(): size}
    groups = _strata(rows, columns[:1])
    available = {key: len(members) for key, members in groups.items()}
    shares = largest_remainder(available, size, minimum)
    counts = {}
    for key, members in groups.items():
        for inner, count in allocate(members, columns[1:], shares[key]).items():
            counts[key + inner] = count
    return counts


def largest_remainder(available: dict[tuple, int], size: int, minimum: int = 0) -> dict[tuple, int]:
    """`size` split over groups in proportion to `available` (after `minimum` each): floors, then one more to
    the largest remainders; ties go to the larger group, then the smaller key, so the split is reproducible."""
    base = {key: min(minimum, n) for key, n in available.items()}
    rest = size - sum(base.values())
    if rest < 0:
        raise SelectionError(f"--sample {size} is smaller than --min-per-stratum for every stratum")
    room = {key: available[key] - base[key] for key in available}
    total = sum(room.values())
    # integer arithmetic: floor and remainder of rest * room / total, exact for any dataset size
    floors = {key: rest * room[key] // total if total else 0 for key in room}
    remainders = {key: rest * room[key] % total if total else 0 for key in room}
    shares = {key: base[key] + floors[key] for key in room}
    left = size - sum(shares.values())
    order = sorted(room, key=lambda key: (-remainders[key], -available[key], key))
    for key in order[:left]:
        shares[key] += 1
    return shares


def select_load(loaded, selection: Selection | None):
    """(the DatasetLoad holding only the chosen rows, the selection record or None). A malformed row of the
    dataset is not a chosen instance: with a selection it is counted in the header, not listed as rejected."""
    if selection is None:
        return loaded, None
    rows, record = select(loaded.rows, selection)
    return loaded.model_copy(update={"rows": rows, "errors": []}), record
