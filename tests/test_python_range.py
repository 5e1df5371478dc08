"""The declared Python range is true: every pin of requirements.lock accepts its lowest version (and the
newest interpreter here), and our code compiles on each interpreter of the range this machine has.

The pins' own Requires-Python comes from the installed distributions' metadata (the venv holds exactly the
lock), so no index is asked and no venv is built. Interpreters come from pyenv; a missing one is skipped."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
import tomllib
from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).parents[1]
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;]+)\s*(?:;(.*))?$")
NEWEST = "3.13"
PYENV = Path.home() / ".pyenv" / "versions"
PACKAGES = ("anchor", "evals", "perturb", "prompts", "scaffolds")


def declared() -> SpecifierSet:
    return SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])


def lowest() -> Version:
    bounds = [Version(spec.version) for spec in declared() if spec.operator in (">=", "~=")]
    assert bounds, "requires-python has no lower bound"
    return max(bounds)


def pins() -> list[tuple[str, str, str | None]]:
    found = []
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.split(" #")[0].strip()
        if line and not line.startswith(("#", "-")):
            match = PIN.match(line)
            assert match, f"requirements.lock: not a pin: {line!r}"
            found.append((match[1], match[2], match[3]))
    return found


@pytest.mark.parametrize("python", ["lowest", NEWEST])
def test_every_pin_accepts_the_declared_range(python: str):
    version = lowest() if python == "lowest" else Version(f"{NEWEST}.0")
    environment = {"python_version": f"{version.major}.{version.minor}", "python_full_version": str(version)}
    refused = []
    for name, pinned, marker in pins():
        if marker and not Marker(marker).evaluate(environment):
            continue
        try:
            installed = distribution(name)
        except PackageNotFoundError:
            continue  # a pin for another platform or Python; its metadata is not here to read
        if installed.version != pinned:
            continue
        needs = installed.metadata.get("Requires-Python")
        if needs and not SpecifierSet(needs).contains(version, prereleases=True):
            refused.append(f"{name}=={pinned} needs Python {needs}")
    assert not refused, f"requirements.lock does not install on Python {version}: {refused}"


def test_the_lowest_bound_is_one_this_project_can_state():
    assert declared().contains(Version(f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"))
    assert not declared().contains("3.10.13")  # the lock's pins need 3.11 (annotated-doc, numpy, pandas, typer)


def interpreters() -> list[Path]:
    found = sorted(PYENV.glob("3.*/bin/python3")) if PYENV.is_dir() else []
    return [path for path in found if declared().contains(path.parent.parent.name)]


@pytest.mark.parametrize("python", interpreters() or [None], ids=lambda p: p.parent.parent.name if p else "none")
def test_our_code_compiles_on_each_interpreter_in_the_range(python: Path | None):
    if python is None:
        pytest.skip(f"no Python of the declared range {declared()} under {PYENV}")
    script = (
        "import sys, pathlib\n"
        "bad = []\n"
        "for name in sys.argv[2:]:\n"
        "    for path in pathlib.Path(sys.argv[1], name).rglob('*.py'):\n"
        "        try: compile(path.read_text(encoding='utf-8'), str(path), 'exec')\n"
        "        except SyntaxError as exc: bad.append(f'{path}:{exc.lineno}: {exc.msg}')\n"
        "print('\\n'.join(bad)); sys.exit(1 if bad else 0)\n"
    )
    done = subprocess.run([python, "-c", script, ROOT, *PACKAGES], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
