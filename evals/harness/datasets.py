"""Loading SWE-bench-format datasets from any of the forms they are published in.

Sources: a parquet file, JSONL, JSON (a list of rows, one row, or an object keyed by instance id), a
`datasets` `save_to_disk` folder, or a Hugging Face id (`owner/name` or `owner/name:split`). Every row is
checked for the fields grading needs; a malformed row is reported by instance id (or row number when it
has none) and the others still load, because one bad row in 2,000 should not hide the other 1,999.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from repoanchor.evals.harness.instance_spec import unusable_spec

REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch")
TEST_LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")
HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+(:[\w.-]+)?$")


class DatasetError(ValueError):
    """The source as a whole cannot be read; the message names it and why."""


class RowError(BaseModel):
    row: int
    """0-based position in the source."""
    line: int | None = None
    """1-based line of a JSONL file (blank lines count); None for other sources."""
    instance_id: str | None = None
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else f"row {self.row}"
        return f"{where}{f' ({self.instance_id})' if self.instance_id else ''}: {self.message}"


class DatasetLoad(BaseModel):
    source: str
    rows: list[dict[str, Any]]
    errors: list[RowError]

    def by_id(self) -> dict[str, dict[str, Any]]:
        return {row["instance_id"]: row for row in self.rows}

    def require_rows(self) -> DatasetLoad:
        """Itself when it holds a usable row; else DatasetError saying why, so that a build of nothing stops
        before it writes a suite of no task."""
        if self.rows:
            return self
        why = f"{len(self.errors)} refused, first {self.errors[0]}" if self.errors else "the source is empty"
        raise DatasetError(f"no usable row: {why} ({self.source})")


def load_dataset(source: str | Path, split: str | None = None) -> DatasetLoad:
    """Load and check every row of `source`; raises DatasetError only when nothing can be read."""
    raw, errors, lines = _read(source, split)
    rows: list[dict[str, Any]] = []
    folders: dict[str, str] = {}  # folder name -> the id of the row that has it (ids name folders)
    for number, item in enumerate(raw):
        if item is None:
            continue  # unreadable line, already reported by the reader
        row, problem = _check(item)
        problem = problem or _folder_clash(row["instance_id"], folders)
        if problem:
            instance_id = item.get("instance_id") if isinstance(item, dict) else None
            line = lines[number] if lines else None
            errors.append(RowError(row=number, line=line, instance_id=_text_or_none(instance_id), message=problem))
            continue
        folders[safe_name(row["instance_id"])] = row["instance_id"]
        rows.append(row)
    errors.sort(key=lambda error: error.row)
    return DatasetLoad(source=str(source), rows=rows, errors=errors)


def _folder_clash(instance_id: str, folders: dict[str, str]) -> str | None:
    """Why `instance_id` cannot have its folder: the same id, or another whose folder name is the same."""
    folder = safe_name(instance_id)
    other = folders.get(folder)
    if other is None:
        return None
    if other == instance_id:
        return "duplicate instance_id"
    return f"names the same folder as {other!r} ({folder!r}: ids name folders, / and such become _)"


def _read(source: str | Path, split: str | None) -> tuple[list[Any], list[RowError], list[int]]:
    """(items, reader errors, each item's 1-based JSONL line: [] for other sources)."""
    path = Path(source)
    if path.is_dir():
        return _read_saved(path, split), [], []
    if path.is_file():
        if path.suffix == ".parquet":
            return _read_parquet(path), [], []
        if path.suffix == ".jsonl":
            return _read_jsonl(path)
        return _read_json(path), [], []
    folder, _, named = str(source).rpartition(":")
    if folder and named and Path(folder).is_dir():  # a save_to_disk folder's split, as the split error says
        return _read_saved(Path(folder), split or named), [], []
    if isinstance(source, str) and HUB_ID.match(source):
        return _read_hub(source, split), [], []
    raise DatasetError(f"{source}: no such file or folder, and not a Hugging Face id (owner/name[:split])")


def _read_parquet(path: Path) -> list[dict]:
    import pandas as pd

    try:
        return pd.read_parquet(path).to_dict("records")
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: not a readable parquet file: {exc}") from exc


def _read_jsonl(path: Path) -> tuple[list[Any], list[RowError], list[int]]:
    rows: list[Any] = []
    errors, lines = [], []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        lines.append(number)
        try:
            rows.append(json.loads(raw.decode("utf-8")))
        except UnicodeDecodeError as exc:
            errors.append(
                RowError(row=len(rows), line=number, message=f"not UTF-8 text: {exc.reason} at byte {exc.start}")
            )
            rows.append(None)  # keeps row numbers aligned with the other rows
        except (json.JSONDecodeError, RecursionError) as exc:
            errors.append(RowError(row=len(rows), line=number, message=f"not JSON: {exc}"))
            rows.append(None)
    return rows, errors, lines


def _read_json(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DatasetError(f"{path}: not JSON: {exc}") from exc
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and "instance_id" in data:
        return [data]
    if isinstance(data, dict) and all(isinstance(value, dict) for value in data.values()):
        # Keyed by id: the key stands in for a missing instance_id.
        return [{"instance_id": key, **value} for key, value in data.items()]
    raise DatasetError(f"{path}: expected a list of rows, one row, or an object keyed by instance id")


def _read_saved(path: Path, split: str | None) -> list[dict]:
    import datasets

    try:
        loaded = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise DatasetError(f"{path}: not a `datasets` save_to_disk folder: {exc}") from exc
    return _pick_split(loaded, split, str(path)).to_list()


def _read_hub(source: str, split: str | None) -> list[dict]:
    import datasets

    name, _, named_split = source.partition(":")
    try:
        loaded = datasets.load_dataset(name, split=split or named_split or None)
    except (ConnectionError, OSError, ValueError) as exc:
        raise DatasetError(
            f"{source}: could not load from the Hugging Face Hub ({type(exc).__name__}: {exc}); without network, "
            "download it elsewhere and pass the parquet/JSONL file or a save_to_disk folder instead"
        ) from exc
    return _pick_split(loaded, split or named_split or None, source).to_list()


def _pick_split(loaded: Any, split: str | None, source: str) -> Any:
    if not hasattr(loaded, "keys"):  # a single Dataset, not a DatasetDict
        return loaded
    names = list(loaded.keys())
    if split is None and len(names) == 1:
        return loaded[names[0]]
    if split not in names:
        raise DatasetError(f"{source}: name a split with {source}:SPLIT; it has {', '.join(names)}")
    return loaded[split]


def _check(item: Any) -> tuple[dict[str, Any], str | None]:
    """The normalised row and what is wrong with it, if anything."""
    if not isinstance(item, dict):
        return {}, f"not an object but {type(item).__name__}"
    row = {key: _plain(value) for key, value in item.items()}
    missing = [key for key in REQUIRED if row.get(key) is None or (isinstance(row[key], str) and not row[key].strip())]
    if missing:
        return row, f"missing or empty {', '.join(missing)}"
    mistyped = [f"{key} (a {type(row[key]).__name__})" for key in REQUIRED if not isinstance(row[key], str)]
    if mistyped:
        return row, f"must be text: {', '.join(mistyped)}"
    unusable = _unusable_id(row["instance_id"])
    if unusable:
        return row, f"instance_id {row['instance_id'][:80]!r} {unusable}"
    for key in TEST_LISTS:
        tests, problem = _test_list(row.get(key))
        if problem:
            return row, f"{key} {problem}" + _lowercase_hint(row, key)
        row[key] = tests
    if isinstance(row.get("version"), (int, float)) and not isinstance(row["version"], bool):
        return row, NUMBER_VERSION.format(value=row["version"])
    return row, unusable_spec(row)


NUMBER_VERSION = (
    "version is a number ({value!r}), not text: as a number 0.20 is 0.2 and 1.10 is 1.1, other versions with other "
    "specs; store it as a string"
)


def _lowercase_hint(row: dict[str, Any], key: str) -> str:
    """SWE-bench Pro spells the test lists in lower case: say so, rather than only that the field is missing."""
    return f" (the row has {key.lower()!r}: rename it {key!r})" if row.get(key) is None and key.lower() in row else ""


def safe_name(task_id: str) -> str:
    """A task id usable as one folder name: never `.` or `..`, never read as a command option (`-x`)."""
    name = re.sub(r"[^\w.-]", "_", task_id)
    return f"_{name}" if name in (".", "..") or name.startswith("-") else name


MAX_ID = 200
"""Characters: an instance id names folders and files (task repositories, ground truth, run folders)."""


def _unusable_id(instance_id: str) -> str | None:
    """Why an instance id cannot name a folder, or None: ids become folder names (see export.safe_name)."""
    if instance_id.strip() in (".", ".."):
        return "names no folder of its own (. or ..)"
    if any(ord(char) < 32 or ord(char) == 127 for char in instance_id):
        return "holds a control character"
    if len(instance_id) > MAX_ID:
        return f"is longer than {MAX_ID} characters"
    return None


def _test_list(value: Any) -> tuple[list[str], str | None]:
    # SWE-bench stores these as JSON-encoded strings; other tools write real lists.
    if value is None:
        return [], "is missing"
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return [], "is a string that is not a JSON list"
    if not isinstance(value, list) or not all(isinstance(test, str) for test in value):
        return [], "must be a list of test ids"
    return value, None


def _plain(value: Any) -> Any:
    """numpy arrays and scalars from parquet become plain Python, at every depth (SWE-rebench's `install_config`
    holds lists, which parquet gives back as arrays); a date or timestamp (a parquet timestamp column, a
    save_to_disk datetime) becomes its ISO text, as SWE-bench writes `created_at`; NaN and NaT (pandas' missing
    values) become None."""
    if type(value).__name__ == "NaTType":
        return None
    if hasattr(value, "isoformat") and not isinstance(value, str):
        return value.isoformat()
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
