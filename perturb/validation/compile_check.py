"""Every output is compiled: in the passes, or under the oldest and newest Pythons, or both.

In-process: ``compile()`` under the running interpreter and ``ast.parse`` with the project's
oldest supported grammar; the file passes leave that grammar to the real oldest interpreter where it
is installed, and every compile where the newest is installed too (`crosscheck.passes_check`).
Across interpreters: `check_with_interpreter` compiles a batch of files under another installed Python
in one subprocess (see `perturb.tree`).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

CURRENT = sys.version_info[:2]
OLDEST_GRAMMAR = (3, 7)

_CHECK_SCRIPT = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
bad = {}
for path in sys.stdin.read().splitlines():
    try:
        with open(path, "rb") as fh:
            compile(fh.read(), path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        bad[path] = f"{type(exc).__name__}: {exc}"
print(json.dumps(bad))
"""


def compile_error(code: str, path: str, min_python: tuple[int, int] = CURRENT) -> str | None:
    """Why `code` does not compile here or under `min_python`'s grammar, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _compile_under(code, path, min_python)
        except (SyntaxError, ValueError) as exc:
            where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
            version = "" if min_python >= CURRENT else f" [checked {CURRENT} and grammar {min_python}]"
            return f"{type(exc).__name__}: {exc.msg if isinstance(exc, SyntaxError) else exc}{where}{version}"
    return None


def _compile_under(code: str, path: str, min_python: tuple[int, int]) -> None:
    """Compile `code`, raising what the running interpreter or `min_python`'s grammar rejects.

    Under an older floor the code is parsed once, with that grammar, and the tree is compiled: one
    parse instead of a compile plus a second parse. A rejected parse is compiled from source first so
    that code the running interpreter rejects too is reported as that interpreter reports it."""
    if min_python >= CURRENT:
        compile(code, path, "exec", dont_inherit=True)
        return
    try:
        tree = ast.parse(code, path, feature_version=max(min_python, OLDEST_GRAMMAR))
    except SyntaxError:
        compile(code, path, "exec", dont_inherit=True)
        raise
    compile(tree, path, "exec", dont_inherit=True)


def installed_interpreters(versions: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """Working executables for the given minor versions (other than the running one).

    Looks on PATH and in pyenv's version folders, and runs each candidate once: a pyenv shim can
    exist for a version that is not activated and fails when called.
    """
    found = {}
    for version in versions:
        if version == CURRENT:
            continue
        for exe in _candidates(version):
            if _runs_as(exe, version):
                found[version] = exe
                break
    return found


def _candidates(version: tuple[int, int]) -> list[str]:
    name = f"python{version[0]}.{version[1]}"
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    direct = sorted(str(p) for p in pyenv_root.glob(f"versions/{version[0]}.{version[1]}*/bin/{name}"))
    on_path = shutil.which(name)
    return direct + ([on_path] if on_path else [])


@functools.cache
def _runs_as(exe: str, version: tuple[int, int]) -> bool:
    try:
        proc = subprocess.run(
            [exe, "-I", "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return False
    return proc.returncode == 0 and proc.stdout.split() == [str(version[0]), str(version[1])]


def check_with_interpreter(exe: str, files: list[Path], timeout: float = 600) -> dict[str, str]:
    """Compile `files` under another interpreter; returns {path: error} for those that fail."""
    if not files:
        return {}
    proc = subprocess.run(
        [exe, "-I", "-c", _CHECK_SCRIPT],
        input="\n".join(str(f) for f in files),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{exe} could not run the compile check: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def read_sources(variant: Path, files: list[str]) -> dict[str, tuple[str, bytes]]:
    """{rel: (path, bytes)} of the .py files among `files` that are in `variant`: what `compile_sources` takes (read
    at once, they may be compiled while something else writes into the tree)."""
    found = {}
    for rel in files:
        path = variant / rel
        if rel.endswith(".py") and path.is_file():
            found[rel] = (str(path), path.read_bytes())
    return found


def compile_sources(sources: dict[str, tuple[str, bytes]]) -> dict[str, str]:
    """{rel: error} of the sources that do not compile here. Bytes are compiled, not text, so that PEP 263
    encoding declarations are honoured."""
    errors = {}
    for rel, (path, data) in sources.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarnings are the original's business
                compile(data, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            errors[rel] = f"{type(exc).__name__}: {exc}"
    return errors
