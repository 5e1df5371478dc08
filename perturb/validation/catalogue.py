"""The catalogue validated the way Jagged Frontier validated it: each transform alone at phi = 1.0 on every
eligible file of a real project, the project's own tests run on both trees, every changed test listed.

One variant per transform (and per stack: the 14 SPTs, all 17), each compared with a baseline run `repeat`
times (tests whose outcome varies there are flaky and left out). A changed test is listed with the sites
rewritten near it (`near_sites.py`: those its code names first), the likely place of the break. Every variant's row
is a file under OUT/rows/, written when it is done: a rerun skips what is there, so a killed check resumes.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from repoanchor.perturb.atomic import write_atomic
from repoanchor.perturb.results import Applied
from repoanchor.perturb.transforms import REPOMIRAGE_IDS, SPT_IDS, get_transform_class
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from repoanchor.perturb.validation.near_sites import sites_near
from repoanchor.perturb.validation.validate import Baseline, junit_command, run_baseline, validate

STACKS = {"all-14-spt": list(SPT_IDS), "all-17": [*SPT_IDS, *REPOMIRAGE_IDS]}
KEYWORDS = {"dead-method": ["describe_state"], "dead-string-assign": ["state is not ready"]}
"""Keyword-bound transforms need names; these collide with nothing common (`--keyword` replaces them)."""
MASKING = "runtime-target-masking"
LISTED = 50
"""Missing and added test ids a row keeps (its counts say how many in all)."""


@dataclass
class CatalogueRow:
    name: str
    transforms: list[str]
    files_changed: int = 0
    sites: int = 0
    tests_compared: int = 0
    changed: int = 0
    unconfirmed: int = 0
    """Changed once, not in the variant's second run (`recheck.py`): a timing test on a busy machine, say."""
    missing: int = 0
    added: int = 0
    flaky: int = 0
    compile_errors: int = 0
    judged_elsewhere: int = 0
    """Changed files this Python could not compile in the original either, judged under another (`rejudge.py`)."""
    infra_error: str | None = None
    seconds: float = 0.0
    apply_seconds: float = 0.0
    """Of `seconds`: writing the variant (parse, transform, emit, compile checks)."""
    test_seconds: float = 0.0
    """Of `seconds`: the variant's test run (the baseline's runs are shared by every row)."""
    changed_tests: list[dict] = field(default_factory=list)
    """{test, original, variant, sites: [{file, where, before, after}]} for each test whose outcome moved."""
    unconfirmed_tests: list[dict] = field(default_factory=list)
    """As `changed_tests`, with `variant_again`: the outcome of the variant's second run."""
    missing_tests: list[str] = field(default_factory=list)
    """Tests the original ran and the variant did not (the first `LISTED`)."""
    added_tests: list[str] = field(default_factory=list)
    """Tests the variant ran and the original did not (the first `LISTED`): a new module collected, say."""
    compile_failures: dict[str, str] = field(default_factory=dict)
    """{file: error} of the changed files that do not compile (the first `LISTED`)."""
    renumbered: int = 0
    """Of `missing`, the tests whose id an added one matches but for its numbers: ids holding a line number
    (pycodestyle's self-doctests are named by each check's ``co_firstlineno``) that moved with the code."""


def plan(transforms: list[str] | None = None, stacks: bool = True) -> dict[str, list[str]]:
    """Variant name -> its passes: each transform alone, then the stacks."""
    chosen = {name: [name] for name in (transforms or [*SPT_IDS, *REPOMIRAGE_IDS])}
    return {**chosen, **(STACKS if stacks else {})}


def check_catalogue(
    src: Path, out: Path, test_cmd: str, *, transforms: list[str] | None = None, stacks: bool = True,
    repeat: int = 2, timeout: float = 1800, keywords: dict[str, list[str]] | None = None,
    on_row: Callable[[CatalogueRow], None] | None = None, recheck: bool = True,
) -> list[CatalogueRow]:  # fmt: skip
    """Every planned variant's row (read back where a run already wrote it); tables in OUT. A transform id or a
    test command that cannot be used is refused (ValueError) before anything is written. With `recheck`, a
    variant that changed tests and the original run once more (`recheck.py`)."""
    src, out = Path(src).resolve(), Path(out).resolve()
    planned = plan(transforms, stacks)
    for transform in {t for passes in planned.values() for t in passes}:
        get_transform_class(transform)
    junit_command(test_cmd, out / "junit.xml")  # where its XML would go, or why it cannot tell
    (out / "rows").mkdir(parents=True, exist_ok=True)
    baseline: Baseline | None = None
    rows = []
    for name, passes in planned.items():
        path = out / "rows" / f"{name}.json"
        if path.is_file():
            row = CatalogueRow(**json.loads(path.read_text(encoding="utf-8")))
        else:
            baseline = baseline or run_baseline(src, test_cmd, repeat=repeat, timeout=timeout)
            row = _check_one(src, out / "trees" / name, name, passes, test_cmd, baseline, timeout, keywords, recheck)
            write_atomic(path, json.dumps(asdict(row), indent=1) + "\n")
        rows.append(row)
        if on_row:
            on_row(row)
    write_tables(out, rows)
    return rows


def _check_one(src, tree, name, passes, test_cmd, baseline, timeout, keywords, recheck) -> CatalogueRow:
    started = time.monotonic()
    shutil.rmtree(tree, ignore_errors=True)  # what a killed run left
    given = {t: list((keywords or KEYWORDS).get(t, [])) for t in passes if t in KEYWORDS}
    # masking must know the command that runs the tests: a `--doctest-modules` there imports every module
    options = {MASKING: {"test_command": test_cmd}} if MASKING in passes else {}
    config = ApplyConfig(
        list(passes), fraction=1.0, file_fraction=1.0, seed=0, transform_keywords=given, options=options
    )
    report = apply_tree(src, tree, config)
    applied_at = time.monotonic()
    applied = [o for o in report.outcomes if isinstance(o, Applied)]
    row = CatalogueRow(name, list(passes), files_changed=len(report.changed_files))
    row.sites = sum(len(o.sites) for o in applied)
    checked = validate(src, tree, test_cmd, baseline=baseline, timeout=timeout, recheck=recheck)
    row.tests_compared, row.flaky, row.infra_error = checked.n_compared, len(checked.flaky), checked.infra_error
    row.changed, row.missing, row.added = len(checked.changed), len(checked.missing), len(checked.added)
    row.unconfirmed = len(checked.unconfirmed)
    row.compile_errors, row.judged_elsewhere = len(checked.compile_errors), len(checked.compile_notes)
    row.compile_failures = dict(sorted(checked.compile_errors.items())[:LISTED])
    row.missing_tests, row.added_tests = checked.missing[:LISTED], checked.added[:LISTED]
    row.renumbered = renumbered(checked.missing, checked.added)
    row.apply_seconds = round(applied_at - started, 2)
    row.test_seconds = round(float(checked.durations.get("variant") or 0.0), 2)
    for changes, listed in ((checked.changed, row.changed_tests), (checked.unconfirmed, row.unconfirmed_tests)):
        listed += [{**change, "sites": sites_near(src, change["test"], applied)} for change in changes]
    shutil.rmtree(tree, ignore_errors=True)
    row.seconds = round(time.monotonic() - started, 2)
    return row


def renumbered(missing: list[str], added: list[str]) -> int:
    """How many missing ids pair with added ones once every run of digits is read as one symbol."""
    unnumbered = Counter(_DIGITS.sub("#", test) for test in added)
    count = 0
    for test in missing:
        key = _DIGITS.sub("#", test)
        if unnumbered[key]:
            unnumbered[key] -= 1
            count += 1
    return count


_DIGITS = re.compile(r"\d+")


COLUMNS = (
    "name", "files_changed", "sites", "tests_compared", "changed", "unconfirmed", "missing", "added", "renumbered",
    "flaky", "seconds", "apply_seconds", "test_seconds",
)  # fmt: skip


def _line(code: str) -> str:
    """A site's code on one table line: its first line, marked when there is more."""
    first, _, rest = code.strip().partition("\n")
    return first[:80] + (" …" if rest or len(first) > 80 else "")


def write_tables(out: Path, rows: list[CatalogueRow]) -> None:
    """catalogue.md (one line per variant, then each changed test with its nearby sites) and catalogue.csv."""
    lines = ["| " + " | ".join(COLUMNS) + " | infra |", "|" + "---|" * (len(COLUMNS) + 1)]
    for row in rows:
        values = [str(getattr(row, column)) for column in COLUMNS]
        lines.append("| " + " | ".join(values) + f" | {row.infra_error or ''} |")
    for row in rows:
        for change in row.changed_tests + row.unconfirmed_tests:
            again = f", then {change['variant_again']} (unconfirmed)" if "variant_again" in change else ""
            lines.append(f"\n- **{row.name}**: `{change['test']}` {change['original']} → {change['variant']}{again}")
            for site in change["sites"]:
                rewrite = f"`{_line(site['before'])}` → `{_line(site['after'])}`"
                lines.append(f"  - {site['file']} {site['where']}: {rewrite}")
    for row in rows:
        for count, tests, where in (
            (row.missing, row.missing_tests, "missing from"),
            (row.added, row.added_tests, "added to"),
        ):
            lines += [f"\n- **{row.name}**: `{test}` {where} the variant's run" for test in tests]
            if count > len(tests):
                lines.append(f"\n- **{row.name}**: and {count - len(tests)} more {where} the variant's run")
        if row.renumbered:
            lines.append(
                f"\n- **{row.name}**: {row.renumbered} of the missing ids match added ones but for their numbers: ids "
                "that hold a line number or a count, moved with the code (their tests read the source's lines)"
            )
    write_atomic(out / "catalogue.md", "\n".join(lines) + "\n")
    csv = [",".join(COLUMNS + ("infra_error",))]
    csv += [",".join([*(str(getattr(r, c)) for c in COLUMNS), json.dumps(r.infra_error or "")]) for r in rows]
    write_atomic(out / "catalogue.csv", "\n".join(csv) + "\n")
