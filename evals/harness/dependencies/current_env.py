"""A venv whose interpreter works wherever it is linked from, for specs that run `tox --current-env`.

sphinx's swebench spec tests with `tox --current-env -epy39 -v --`; tox-current-env 0.0.11 (the spec's pin) links
`.tox/py39/bin/python` to the running interpreter and puts that folder first on PATH. In SWE-bench's conda
environment the link reaches a binary inside the environment; a venv's interpreter is itself a link to the base
Python, and Python started through a link outside the venv finds no `pyvenv.cfg`: the tests ran without the venv's
packages ("No module named pytest"), the original's included (sphinx-10323, -7440). For such a spec the venv's
interpreter becomes a bash script that starts the base Python under the venv's own path (`exec -a`), which Python
takes as its location whatever path reached the script.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

WRAPPED = "interpreter wrapped: tox --current-env links it from outside the venv"


def needs_wrapper(spec: dict[str, Any]) -> bool:
    command = spec.get("test_cmd")
    return any("--current-env" in line for line in ([command] if isinstance(command, str) else command or []))


def wrap_interpreter(venv: Path) -> str:
    """Replace the venv's `python3.X` (a link to the base Python) by the script; `python` and `python3` stay links
    to it. Returns the step for the venv's record."""
    bin_dir = venv / "bin"
    versioned = next(p for p in sorted(bin_dir.glob("python3.*")) if p.name[len("python3.") :].isdigit())
    base = os.path.realpath(versioned)
    versioned.unlink()
    versioned.write_text(f'#!/bin/bash\nexec -a "{versioned}" "{base}" "$@"\n')
    versioned.chmod(0o755)
    for name in ("python", "python3"):
        (bin_dir / name).unlink(missing_ok=True)
        (bin_dir / name).symlink_to(versioned.name)
    return WRAPPED
