"""A package whose version file is written by its install step from the nearest git tag and ignored by git
(as setuptools_scm's `_version.py` is): importing it fails in any checkout where the install step has not
run, and the install fails where the tag is missing. One instance in the SWE-bench format, with
`repoanchor_install` as its install step."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

RATES = '''"""Interest and fees."""

from functools import lru_cache
from math import floor

from verpkg.money import cents

ANNUAL_RATE = 0.05
MONTHS_PER_YEAR = 12
SMALL_AMOUNT = 100
SMALL_FEE = 2.5
FEE_LABEL = "standard fee"
ROUNDING_DIGITS = 2
LARGE_AMOUNT = 10000
LARGE_DISCOUNT = 0.15
CURRENCY = "EUR"
GRACE_DAYS = 30


@lru_cache(maxsize=None)
def monthly_rate(annual=ANNUAL_RATE):
    return annual / MONTHS_PER_YEAR


def fee_for(amount):
    """The fee on `amount`: small amounts pay SMALL_FEE."""
    return SMALL_FEE if amount < SMALL_AMOUNT else 0.0


def discount_for(amount):
    return LARGE_DISCOUNT if amount > LARGE_AMOUNT else 0.0


def describe(amount):
    return f"{FEE_LABEL}: {round(fee_for(amount), ROUNDING_DIGITS)} {CURRENCY}"


def due_in(days_late):
    return max(0, floor(days_late) - GRACE_DAYS)


def fee_in_cents(amount):
    return cents(fee_for(amount))
'''
MAKE_VERSION = """import subprocess
from pathlib import Path

# The version comes from the nearest git tag, as setuptools_scm's does: no tag, no install.
tag = subprocess.run(["git", "describe", "--tags", "--abbrev=0"], capture_output=True, text=True, check=True)
Path("verpkg/_version.py").write_text(f"VERSION = {tag.stdout.strip().lstrip('v')!r}\\n")
"""
FILES = {
    ".gitignore": "verpkg/_version.py\n__pycache__/\n",
    "make_version.py": MAKE_VERSION,
    "verpkg/__init__.py": (
        "from verpkg._version import VERSION\nfrom verpkg.rates import describe, fee_for, monthly_rate\n"
    ),
    "verpkg/rates.py": RATES,
    "verpkg/money.py": "def cents(value):\n    return round(value * 100)\n",
    "README.md": (
        "# verpkg\n\nThe standard fee is 2.5 EUR on amounts under 100; amounts over 10000 get a 0.15 discount.\n"
        "Interest is 0.05 a year over 12 months, rounded to 2 digits, after 30 grace days.\n"
        'The fee\'s label is "standard fee".\n'
    ),
    "tests/__init__.py": "",
    "tests/test_rates.py": (
        "import verpkg\n\n\ndef test_version():\n    assert verpkg.VERSION == '1.4.2'\n\n\n"
        "def test_monthly_rate():\n    assert abs(verpkg.monthly_rate(0.12) - 0.01) < 1e-12\n\n\n"
        "def test_small_fee():\n    assert verpkg.fee_for(50) == 2.5\n\n\n"
        "def test_describe():\n    assert verpkg.describe(50) == 'standard fee: 2.5 EUR'\n\n\n"
        "def test_discount_and_grace():\n    from verpkg.rates import discount_for, due_in, fee_in_cents\n\n"
        "    assert discount_for(20000) == 0.15\n    assert due_in(31.5) == 1\n    assert fee_in_cents(5) == 250\n"
    ),
}
FIX = ("return SMALL_FEE if amount < SMALL_AMOUNT else 0.0", "return SMALL_FEE if amount <= SMALL_AMOUNT else 0.0")
NEW_TEST = "\n\ndef test_the_boundary_is_small():\n    assert verpkg.fee_for(100) == 2.5\n"
P2P = ["test_version", "test_monthly_rate", "test_small_fee", "test_describe", "test_discount_and_grace"]


def _git(repo: Path, *args: str) -> str:
    who = ["-c", "user.name=fixture", "-c", "user.email=fixture@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", *who, *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def make_version_project(root: Path, extra: dict[str, str] | None = None, install: str = "") -> tuple[Path, Path]:
    """(repo cache, dataset): the repository as `root/acme__verpkg` and a one-row dataset beside it; `extra`
    files join the package's, `install` runs after its install step."""
    repo = root / "acme__verpkg"
    for rel, text in {**FILES, **(extra or {})}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(root, "init", "-q", "-b", "main", str(repo))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "verpkg 1.4")
    _git(repo, "tag", "v1.4.2")
    base = _git(repo, "rev-parse", "HEAD").strip()
    rates = repo / "verpkg" / "rates.py"
    rates.write_text(RATES.replace(*FIX))
    patch = _git(repo, "diff")
    _git(repo, "checkout", "-q", "--", ".")
    test_file = repo / "tests" / "test_rates.py"
    test_file.write_text(FILES["tests/test_rates.py"] + NEW_TEST)
    test_patch = _git(repo, "diff")
    _git(repo, "checkout", "-q", "--", ".")
    row = {
        "repo": "acme/verpkg",
        "instance_id": "acme__verpkg-1",
        "base_commit": base,
        "environment_setup_commit": base,
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": "fee_for(100) charges no fee, but 100 is a small amount.",
        "hints_text": "",
        "created_at": "2024-05-01T00:00:00Z",
        "version": "1.4",
        "FAIL_TO_PASS": json.dumps(["tests/test_rates.py::test_the_boundary_is_small"]),
        "PASS_TO_PASS": json.dumps([f"tests/test_rates.py::{name}" for name in P2P]),
        "repoanchor_test_cmd": "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -rA -p no:cacheprovider {tests}",
        "repoanchor_log_parser": "pytest",
        "repoanchor_install": " && ".join(filter(None, ["python make_version.py", install])),
    }
    dataset = root / "dataset.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    return root, dataset
