"""A second look at the tests a variant changed: the original and the variant run once more.

The baseline's repeats find the tests that vary on their own, but not the ones that vary only now and then: a
test timing its code (zipp's `test_implied_dirs_performance` fits a complexity curve to measured times) passed in
both baseline runs and failed in a variant whose one rewrite is a `while` loop far from it, because the machine
was busy. So when a variant changes tests, both trees run again, and each change is sorted:

- the original's outcome differs from its baseline's: the test varies on its own, the baseline runs missed it
  (flaky, left out like the others);
- the variant's outcome repeats: a confirmed change;
- the variant's outcome does not repeat: unconfirmed. That is no proof of equivalence either, so it still fails
  the variant (`ValidationReport.ok`), but it is listed apart, with both of the variant's outcomes, so a reader
  can tell a transform that breaks a test from a test that broke once.

Only the tests that changed are sorted: a test missing from the variant's run, or new in it, stands as seen.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from repoanchor.perturb.validation.testrun import InfrastructureError, TestRun

if TYPE_CHECKING:
    from collections.abc import Callable

    from repoanchor.perturb.validation.validate import ValidationReport


def recheck_changes(report: ValidationReport, original: Path, variant: Path, run: Callable[[Path], TestRun]) -> None:
    """Sort `report.changed` by one more run of each tree (`run(tree)`); a run that cannot be made leaves the
    changes as they were seen, with the reason in `report.recheck_error`."""
    if not report.changed:
        return
    try:
        original_again, variant_again = run(original), run(variant)
    except InfrastructureError as exc:
        report.recheck_error = str(exc)
        return
    confirmed, unconfirmed, flaky = [], [], []
    for change in report.changed:
        test = change["test"]
        if original_again.outcomes.get(test) != change["original"]:
            flaky.append(test)
        elif variant_again.outcomes.get(test) == change["variant"]:
            confirmed.append(change)
        else:
            unconfirmed.append({**change, "variant_again": variant_again.outcomes.get(test, "absent")})
    report.changed, report.unconfirmed = confirmed, unconfirmed
    report.flaky = sorted({*report.flaky, *flaky})
    report.n_compared -= len(flaky)
