"""Dependencies as released when an instance's environment was current (pip's `--uploaded-prior-to`).

SWE-bench specs leave most dependencies unpinned, and today's releases break old projects: pvlib 0.8's venv got
NumPy 2, which removed `np.Inf`, so `import pvlib` failed and every test of its instances with it. A venv is built
for a (repo, version), so its date is one per (repo, version) too: the committer date of the row's
`environment_setup_commit` (the commit SWE-bench built that version's environment at), read from the clone, but
never earlier than half a year after the spec's Python came out: SWE-bench gives old versions (requests 2.3, of
2014) Python 3.9, whose packages of that time (pytest 2.6) do not run on it, nor have wheels for it. Nor, where
the spec's install is editable (`pip install -e .`), before setuptools 64 (2022-08-11): pip 26 installs editable
only through PEP 660, which older setuptools lacks, and its isolated build takes setuptools under the date too
(sphinx 5.0, dated 2022-06: "missing the 'build_editable' hook"). A spec whose dependencies are a conda
environment file is not dated: conda's packages bring their C libraries, and the PyPI releases of the date often
did not (xarray 2022.09's dated venv got eccodes 1.5, which needs a system ecCodes, and 189 tests failed at
collection, the original's too; today's eccodes bundles it).

A suite's tasks are committed anew (one commit, a fixed date), so a suite records the date its instance's venv was
built with in each task's grading row (`repoanchor_deps_as_of`, a date or `none`), and a grade builds the same
venv from it. `REPOANCHOR_DEPS_AS_OF` chooses otherwise: `none` (today's releases), or an ISO date or datetime
for every venv.

The date is written into the venv's own `pip.conf` (pip's site configuration), so every pip run in the venv, its
build's and each test run's project install alike, resolves under it; it needs pip 26.0 or later (Python 3.9 and
later here). An older pip gets the versions this tool's pip chooses under the date for the requirements the build
names, as constraints (`dated_pins.py`), and where none can be chosen it is recorded as not applying the date.
Files on a local index or find-links folder carry no upload time, and pip keeps them whatever the date.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from repoanchor.evals.harness.dependencies.editable import installs_editable
from repoanchor.evals.harness.dependencies.requirements_file import exact_pin, package_list

VARIABLE = "REPOANCHOR_DEPS_AS_OF"
ROW_FIELD = "repoanchor_deps_as_of"
PYTHON_RELEASED = {
    "3.5": "2015-09-13", "3.6": "2016-12-23", "3.7": "2018-06-27", "3.8": "2019-10-14", "3.9": "2020-10-05",
    "3.10": "2021-10-04", "3.11": "2022-10-24", "3.12": "2023-10-02", "3.13": "2024-10-07", "3.14": "2025-10-07",
}  # fmt: skip
"""Each Python's x.y.0 release; a version not listed sets no floor."""
EDITABLE_FLOOR = "2022-08-12T00:00:00Z"
"""The day after setuptools 64.0.0, the first with PEP 660's editable hooks."""
SETTLED = timedelta(days=183)
"""From a Python's release to the date its packages are taken from: wheels for it and support for it come in."""
FIRST_PIP = (26, 0)
"""The first pip with `--uploaded-prior-to`."""
FIRST_PIP_PYTHON = (3, 9)
"""The oldest Python pip 26 runs on: an older one's venv keeps an older pip (`dated_pins.py` dates it)."""


@dataclass(frozen=True)
class ReleaseDate:
    when: str | None
    """UTC, "YYYY-MM-DDTHH:MM:SSZ"; None for today's releases."""
    source: str
    """Where it came from, for the venv's record."""


TODAY = ReleaseDate(None, "today's releases")


def release_date(row: dict[str, Any], clone: Path, spec: dict[str, Any] | None = None) -> ReleaseDate:
    """The date `row`'s venv, built by `spec`, resolves its dependencies under (see the module's docstring)."""
    chosen = os.environ.get(VARIABLE, "").strip()
    if chosen.lower() == "none":
        return ReleaseDate(None, f"{VARIABLE}=none: today's releases")
    if chosen:
        return ReleaseDate(_utc(chosen, VARIABLE), f"{VARIABLE}={chosen}")
    recorded = str(row.get(ROW_FIELD) or "").strip()
    if recorded.lower() == "none":
        return ReleaseDate(None, f"{ROW_FIELD}=none (as the suite was built): today's releases")
    if recorded:
        return ReleaseDate(_utc(recorded, ROW_FIELD), f"{ROW_FIELD}={recorded} (as the suite was built)")
    if (spec or {}).get("packages") == "environment.yml":
        return ReleaseDate(None, "an environment file's conda packages, whose dated PyPI releases may lack their C "
                                 "libraries: today's releases")  # fmt: skip
    commit = row.get("environment_setup_commit")
    if not commit:
        return ReleaseDate(None, "no environment_setup_commit in the row: today's releases")
    proc = subprocess.run(
        ["git", "show", "-s", "--format=%cI", str(commit)], cwd=clone, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        return ReleaseDate(None, f"environment_setup_commit {commit} is not in the clone: today's releases")
    committed = ReleaseDate(_utc(proc.stdout.strip(), "the commit date"), f"environment_setup_commit {commit[:12]}")
    floor, why = max(_floors(spec or {}), default=(None, ""))
    if floor and floor > committed.when:
        return ReleaseDate(floor, f"{why}, later than {committed.source}")
    return committed


def _floors(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(date, why) of each date the spec's venv may not resolve before."""
    found = []
    settled = _settled(str(spec.get("python")))
    if settled:
        found.append((settled, f"Python {spec['python']} released + {SETTLED.days} days"))
    # Only pip 26 (Python 3.9 and later) needs PEP 660's hooks: an older pip installs editable through
    # `setup.py develop` (scikit-learn 0.22's Python 3.6 venv, dated 2022, got pandas and pytest of 2022).
    if installs_editable(str(spec.get("install") or "")) and spec_python(spec) >= FIRST_PIP_PYTHON:
        found.append((EDITABLE_FLOOR, "setuptools 64 (an editable install)"))
    return found


def spec_python(spec: dict[str, Any]) -> tuple[int, ...]:
    """The spec's Python as (major, minor), or () where it names none."""
    found = re.match(r"(\d+)\.(\d+)", str(spec.get("python") or ""))
    return tuple(int(n) for n in found.groups()) if found else ()


def _settled(python: str | None) -> str | None:
    released = PYTHON_RELEASED.get(python or "")
    if released is None:
        return None
    moment = datetime.fromisoformat(released).replace(tzinfo=timezone.utc) + SETTLED
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _utc(text: str, what: str) -> str:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{what}: {text!r} is not an ISO date or datetime (e.g. 2023-03-17)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def exact_pins(spec: dict[str, Any]) -> list[str]:
    """The spec's packages pinned to one version (`tox==4.16.0`, `requirements_file.exact_pin`), in its package list
    or `pip_packages`, each as written (a marker is pip's to evaluate): its own
    choice, whatever their release date, so they are installed before the date bounds the rest (sphinx's pins tox
    4.16.0, of 2024, beside 2022's packages; scikit-learn 1.3's package list cython 3.0.10, of 2024)."""
    found = [*package_list(spec), *(spec.get("pip_packages") or [])]
    return list(dict.fromkeys(p for p in found if exact_pin(p)))


def pip_version(venv: Path) -> tuple[int, ...]:
    """The venv's pip as a version tuple (its `major.minor`), or () where pip cannot say."""
    probe = "import pip; print(pip.__version__)"
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=False)
    numbers = re.match(r"(\d+)\.(\d+)", proc.stdout.strip())
    return tuple(int(n) for n in numbers.groups()) if numbers else ()


def bound_venv(venv: Path, date: ReleaseDate) -> str | None:
    """Write `date` into the venv's pip.conf; returns why it does not apply (None where it does)."""
    if date.when is None:
        return None
    found = pip_version(venv)
    if found < FIRST_PIP:
        shown = ".".join(map(str, found)) or "unknown"
        return f"dependencies as of {date.when} not applied: the venv's pip {shown} has no --uploaded-prior-to (26.0+)"
    (venv / "pip.conf").write_text(f"[global]\nuploaded-prior-to = {date.when}\n")
    return None
