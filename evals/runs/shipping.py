"""What travels between the driver and a Ray worker, so no node needs the driver's folders.

Out: the unit (its task row and run options, never ground truth: a Task holds none) with its repository path
replaced by BUNDLED and its base commit resolved; the repository itself as a git bundle (scaffolds' bundle.py);
a hints file's text.
Back: the attempt's outcome and its run folder as a tar.gz, which the driver alone unpacks into `out`.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
import traceback
from pathlib import Path

from repoanchor.evals.runs.attempt import run_attempt
from repoanchor.evals.runs.matrix import Unit
from repoanchor.scaffolds.environments.bundle import unpack_bundle

BUNDLED = Path("repository-travels-as-a-bundle")
"""The repository path a travelling unit holds: relative and nonexistent, so a worker that used it would fail."""


def travelling(unit: Unit, commit: str) -> Unit:
    """`unit` as it travels: no driver path but the hints file's, which stays only as the condition's label."""
    if unit.options.instruction_cache is not None:
        raise ValueError(f"{unit.unit_id}: instruction_cache is a folder on the driver; the Ray executor cannot use it")
    task = unit.task.model_copy(update={"repo": BUNDLED, "base_commit": commit})
    return unit.model_copy(update={"task": task})


def run_shipped(unit: Unit, hints_text: str | None, bundle: bytes) -> dict:
    """A Ray task: run one attempt of `unit` in a private temporary folder of this node; its outcome, plus
    `archive`, the attempt folder as tar.gz bytes (None when the attempt wrote no folder)."""
    with tempfile.TemporaryDirectory(prefix="repoanchor-unit-") as scratch:
        folder = Path(scratch) / "attempt"
        try:
            repo = unpack_bundle(bundle, unit.task.base_commit, Path(scratch))
        except Exception:  # no git here, a full disk: recorded with its traceback, like any crash
            return {"error": f"could not unpack {unit.unit_id}'s repository on this node:\n{traceback.format_exc()}"}
        here = unit.model_copy(update={"task": unit.task.model_copy(update={"repo": repo})})
        outcome = run_attempt(here, str(folder), hints_text)
        return {**outcome, "archive": archive_folder(folder) if folder.is_dir() else None}


def archive_folder(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:  # text compresses well at 1
        for path in sorted(folder.iterdir()):
            archive.add(path, arcname=path.name)
    return buffer.getvalue()


def unpack_archive(data: bytes, folder: Path) -> None:
    """Unpack an attempt folder's archive into `folder`; the data filter refuses members that would land outside
    it (absolute paths, `..`, links out), so a misbehaving node cannot write elsewhere in `out`."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(folder, filter="data")
