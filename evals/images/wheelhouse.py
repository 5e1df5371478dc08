"""The wheels an image installs, fetched on the host by the ordinary pip client, for the image's Python.

`pip wheel` (not `pip download`): a dependency published only as an sdist is built into a wheel here, so
the image's build needs no network and no compiler. The same interpreter version as the image's runs pip,
so the wheels' tags fit it. Wheelhouses are cached by what they hold (Python, platform, requirements);
an interrupted fetch leaves no READY marker and is fetched again.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
from pathlib import Path

from repoanchor.evals.harness.venv_build import locked
from repoanchor.scaffolds.records import InfraError

READY = "repoanchor-wheels.json"


def wheelhouse_key(python_version: str, requirements: list[str], build_requires: list[str]) -> str:
    content = {"python": python_version, "machine": platform.machine(), "requirements": requirements,
               "build_requires": build_requires}  # fmt: skip
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


def _pip_wheel(python: str, folder: Path, args: list[str], log: list[str]) -> None:
    # --use-pep517: an sdist without pyproject.toml is built in an isolated env that has `wheel`, not by
    # `setup.py bdist_wheel` in an interpreter that may lack it (atomicwrites on a bare pyenv Python).
    argv = [
        python,
        "-m",
        "pip",
        "wheel",
        "--disable-pip-version-check",
        "--use-pep517",
        "--wheel-dir",
        str(folder),
        *args,
    ]
    proc = subprocess.run(argv, capture_output=True, text=True)
    log.append(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        raise InfraError("image_wheels", f"pip wheel failed for {python}:\n{(proc.stdout + proc.stderr)[-3000:]}")


def fetcher(python: str, python_version: str, cache: Path) -> str:
    """A cached venv of `python` with an upgraded pip and `wheel`, whose pip fetches the wheels: a bare
    interpreter's own pip can be too old for today's index and build options (3.6 ships pip 18)."""
    venv = Path(cache).resolve() / f"fetch-py{python_version}"
    with locked(venv):
        if not (venv / READY).is_file():
            shutil.rmtree(venv, ignore_errors=True)
            upgrade = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip", "wheel"]
            for argv in ([python, "-m", "venv", str(venv)], upgrade):
                proc = subprocess.run(argv, capture_output=True, text=True)
                if proc.returncode != 0:
                    output = (proc.stdout + proc.stderr)[-2000:]
                    raise InfraError("image_wheels", f"{' '.join(argv)} failed:\n{output}")
            (venv / READY).write_text("{}")
    return str(venv / "bin" / "python")


def fetch_wheels(
    python: str, python_version: str, requirements: list[str], build_requires: list[str], cache: Path
) -> Path:
    """The cached wheelhouse folder (wheels plus READY) for these requirements, fetched now if missing."""
    key = wheelhouse_key(python_version, requirements, build_requires)
    folder = Path(cache).resolve() / f"py{python_version}-{key}"
    with locked(folder):
        if (folder / READY).is_file():
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
        log: list[str] = []
        pip_python = fetcher(python, python_version, cache)
        _pip_wheel(pip_python, folder, ["-r", str(folder / "requirements.txt")], log)
        if build_requires:
            _pip_wheel(pip_python, folder, build_requires, log)
        (folder / "fetch.log").write_text("\n".join(log), encoding="utf-8")
        wheels = sorted(path.name for path in folder.glob("*.whl"))
        (folder / READY).write_text(json.dumps({"python": python_version, "wheels": wheels}, indent=1))
        return folder


def wheel_names(folder: Path) -> list[str]:
    return json.loads((Path(folder) / READY).read_text())["wheels"]
