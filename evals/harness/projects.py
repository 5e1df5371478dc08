"""Real projects from PyPI source distributions, downloaded once and cached on disk.

Used by the demo, the differential tests and the benchmarks. Extraction goes to a temporary
folder that is renamed into place, so an interrupted download never leaves half a tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

DEFAULT_CACHE = Path(os.environ.get("REPOANCHOR_CACHE", Path.cwd() / ".cache"))


class DownloadError(RuntimeError):
    """pip could not fetch the sdist (no network, unknown version)."""


def fetch_sdist(name: str, version: str, cache: Path | None = None) -> Path:
    """The extracted source tree of NAME==VERSION from PyPI, under `cache`/projects/."""
    cache = (cache or DEFAULT_CACHE).resolve()
    dest = cache / "projects" / f"{name}-{version}"
    if dest.is_dir():
        return _project_root(dest)
    archive = _download(name, version, cache / "sdists")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{name}-") as tmp:
        _extract(archive, Path(tmp))
        try:
            Path(tmp).rename(dest)
        except OSError:
            if not dest.is_dir():  # another process won the race; its tree is as good as ours
                raise
        else:
            Path(tmp).mkdir()  # TemporaryDirectory cleans up the path it created
    return _project_root(dest)


def _download(name: str, version: str, sdists: Path) -> Path:
    sdists.mkdir(parents=True, exist_ok=True)
    for existing in sdists.glob("*"):
        if _is_archive_of(existing, name, version):
            return existing
    with tempfile.TemporaryDirectory(dir=sdists) as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            name,
            f"{name}=={version}",
            "-d",
            tmp,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        files = list(Path(tmp).iterdir())
        if proc.returncode != 0 or not files:
            raise DownloadError(f"pip could not download {name}=={version}: {proc.stderr.strip()[-800:]}")
        target = sdists / files[0].name
        shutil.move(str(files[0]), target)
        return target


def _is_archive_of(path: Path, name: str, version: str) -> bool:
    stem = path.name.lower().replace("_", "-")
    return stem.startswith(f"{name.lower().replace('_', '-')}-{version}.") and path.suffix in {".gz", ".zip"}


def _extract(archive: Path, into: Path) -> None:
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(into, filter="data")


def _project_root(dest: Path) -> Path:
    """sdists unpack to one top folder; return it."""
    entries = [p for p in dest.iterdir() if not p.name.startswith(".")]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest
