"""The build context of an environment image, written as one tar: Dockerfile, wheels and, where the base's
own Python is not the wanted one, the host's interpreter of that version.

The build runs with `--network none`: everything it installs is in the context. A copied interpreter keeps
its host path, since pyenv builds link their libpython by absolute path; its site-packages (the host's own
packages) and its test suite stay out. The venv and /testbed belong to uid 1000, the user agents and
grades run as, so a per-task install can write into the venv.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path, PurePosixPath

from repoanchor.evals.harness.container_run import IMAGE_VENV as VENV

WHEELS = "/opt/repoanchor/wheels"
PATH = f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ENVIRONMENT = {
    "PATH": PATH,
    "VIRTUAL_ENV": VENV,
    "LANG": "C.UTF-8",
    # pip in the image (the per-task install, an agent's own `pip install`) finds only the wheelhouse.
    "PIP_NO_INDEX": "1",
    "PIP_FIND_LINKS": WHEELS,
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
}


def dockerfile(base: str, interpreter: str, copied_prefix: str | None, wrapped: str | None = None) -> str:
    """`wrapped` ("X.Y"): the venv's pythonX.Y becomes the script of `dependencies.current_env`."""
    lines = [f"FROM {base}"]
    opened = ""
    if copied_prefix:
        lines.append(f"COPY python {copied_prefix}")
        parents = [str(p) for p in PurePosixPath(copied_prefix).parents if str(p) != "/"]
        opened = "chmod a+rx " + " ".join(parents) + " && " if parents else ""
    lines += [
        f"COPY wheels {WHEELS}",
        f"RUN {opened}{interpreter} -m venv {VENV} && {VENV}/bin/python -m pip install --no-cache-dir -q "
        f"--no-index --find-links {WHEELS} -r {WHEELS}/requirements.txt && {_wrap(wrapped)}"
        f"mkdir -p /testbed && chown -R 1000:1000 {VENV} /testbed",
        "ENV " + " ".join(f"{key}={value}" for key, value in ENVIRONMENT.items()),
        "WORKDIR /testbed",
    ]
    return "\n".join(lines) + "\n"


def _wrap(version: str | None) -> str:
    if version is None:
        return ""
    python = f"{VENV}/bin/python{version}"
    script = """'#!/bin/bash\\nexec -a "%s" "%s" "$@"\\n'"""
    return (
        f'base=$(readlink -f {python}) && rm {python} && printf {script} {python} "$base" > {python} && '
        f"chmod 755 {python} && ln -sf python{version} {VENV}/bin/python && "
        f"ln -sf python{version} {VENV}/bin/python3 && "
    )


def _keep_python(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """Leave out the interpreter's test suite, its site-packages contents and bytecode caches."""
    parts = PurePosixPath(info.name).parts[1:]  # below "python/": lib/pythonX.Y/<name>/...
    if len(parts) > 3 and parts[0] == "lib" and parts[2] in ("test", "site-packages"):
        return None
    return None if "__pycache__" in parts else info


def write_context(path: Path, text: str, wheels: Path, copied_prefix: str | None) -> Path:
    """The context tar at `path`: `Dockerfile`, `wheels/` (with requirements.txt) and `python/`."""
    with tarfile.open(path, "w") as tar:
        data = text.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
        tar.add(wheels, arcname="wheels")
        if copied_prefix:
            tar.add(copied_prefix, arcname="python", filter=_keep_python)
    return path
