"""Compile a variant's changed files under other installed Pythons, and roll back what fails.

The oldest supported Python catches syntax too new for the project; the newest catches syntax
that was removed. Both run as one subprocess each, concurrently. A file changed only by
file-scope passes is restored from the source tree and its passes become `Failed`; a file a
tree transform wrote belongs to a multi-file transaction that cannot be undone one file at a
time, so it is reported as an integrity error (the sampler rejects such a variant).
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from repoanchor.perturb.results import Applied, Failed
from repoanchor.perturb.validation.compile_check import CURRENT, check_with_interpreter, installed_interpreters

if TYPE_CHECKING:
    from repoanchor.perturb.tree import TreeReport

NEWEST_CHECKED = (3, 13)


def check_other_interpreters(src: Path, out: Path, report: TreeReport) -> None:
    wanted = sorted({report.project.min_python, NEWEST_CHECKED} - {CURRENT})
    interpreters = installed_interpreters(wanted)
    files = [out / rel for rel in report.changed_files if rel.endswith(".py") and (out / rel).is_file()]
    with ThreadPoolExecutor(max_workers=max(1, len(interpreters))) as pool:
        results = {v: pool.submit(check_with_interpreter, exe, files) for v, exe in interpreters.items()}
    for version, future in sorted(results.items()):
        where = f"Python {version[0]}.{version[1]}"
        report.interpreter_checks[f"{version[0]}.{version[1]}"] = len(files)
        for path, error in sorted(future.result().items()):
            rel = Path(path).relative_to(out).as_posix()
            if rel not in report.changed_files:
                continue  # already rolled back for the other interpreter
            if rel in report.tree_written or not (src / rel).is_file():
                report.integrity_errors.append(f"{rel} does not compile under {where}: {error}")
                continue
            shutil.copyfile(src / rel, out / rel)
            report.changed_files.remove(rel)
            _fail_file(report, rel, f"output does not compile under {where}, file rolled back: {error}")


def _fail_file(report: TreeReport, rel: str, reason: str) -> None:
    report.outcomes = [
        Failed(o.transform, o.file, reason) if isinstance(o, Applied) and o.file == rel else o for o in report.outcomes
    ]
