"""A suite as a SWE-bench-format dataset (JSONL + parquet, split `test`), for other harnesses to run and ours
to grade.

Each row is the task's grading row from the suite's ground truth (the SWE-bench fields re-pointed at the
task's tree: its `base_commit`, the gold patch remapped onto the variant, `test_patch`, `FAIL_TO_PASS`,
`PASS_TO_PASS`) with the task's own `problem_statement` and `repoanchor_*` fields, and `image_name`: the
task's image baked by `repoanchor suite images` (its tree at /testbed, installed), which mini-swe-agent's
swebench runner takes instead of SWE-bench's published image. A harness shows the agent only the
problem statement; the patch fields are there for graders, as in SWE-bench's own files.

The official harness cannot grade a variant (it would check the dataset repository out at `base_commit`,
which the variant's history does not share): grade what the harness produced with `repoanchor import
--suite SUITE` and `repoanchor grade`. Extend tasks are graded by their family's validator, ours only.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from repoanchor.evals.harness.suite_format import ground_truth_file, read_suite_tasks
from repoanchor.evals.suites.export import jsonl
from repoanchor.perturb.atomic import write_atomic

IMAGE_FIELD = "image_name"
SPLIT = "test"


def suite_rows(suite: Path, images: dict[str, str]) -> tuple[list[dict], Counter]:
    """The dataset rows of `suite` and, counted by reason, the tasks left out (each reason names the file)."""
    rows, left_out = [], Counter()
    for task in read_suite_tasks(suite):
        truth_file = ground_truth_file(suite, task.instance_id)
        try:
            truth = json.loads(truth_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            left_out[f"{truth_file}: unreadable ground truth ({type(error).__name__})"] += 1
            continue
        if not isinstance(truth, dict) or not isinstance(truth.get("row"), dict):
            left_out[f"{truth_file}: row: missing (no grading row to export)"] += 1
            continue
        visible = task.model_dump(exclude_none=True)
        row = {**truth["row"], **visible, IMAGE_FIELD: images.get(task.instance_id)}
        rows.append({key: value for key, value in row.items() if value is not None})
    return rows, left_out


def read_images(path: Path | None) -> dict[str, str]:
    """task id -> image from `repoanchor suite images`' file ({task: {"image": ...}}); {} without one."""
    if path is None or not Path(path).is_file():
        return {}
    records = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(records, dict):
        raise ValueError(f"{path}: expected {{task id: {{image: ...}}}}")
    return {
        task: record["image"] for task, record in records.items() if isinstance(record, dict) and record.get("image")
    }


def export_suite(suite: Path, out: Path, images: Path | None = None) -> dict:
    """Write `out`/<suite>/test.jsonl and test.parquet, a dataset folder with one split, `test`, as SWE-bench's
    (what `datasets.load_dataset(folder, split="test")` reads, as mini-swe-agent's `--subset FOLDER` does).
    The default images file is `SUITE.images.json` beside the suite."""
    suite = Path(suite)
    images = images or suite.with_name(suite.name + ".images.json")
    rows, left_out = suite_rows(suite, read_images(images))
    (Path(out) / suite.name).mkdir(parents=True, exist_ok=True)
    target = Path(out) / suite.name / f"{SPLIT}.jsonl"
    write_atomic(target, jsonl(rows))
    files = [str(target)]
    if rows:
        files.append(str(_parquet(rows, target.with_suffix(".parquet"))))
    return {
        "out": str(out), "files": files, "rows": len(rows),
        "without_image": sum(1 for row in rows if IMAGE_FIELD not in row), "left_out": dict(left_out),
    }  # fmt: skip


def _parquet(rows: list[dict], path: Path) -> Path:
    """The same rows as parquet; nested values (lists of allowed files, dicts) as JSON text, as SWE-bench
    stores FAIL_TO_PASS, so every column has one type."""
    import pandas as pd

    columns = sorted({key for row in rows for key in row})
    flat = [{key: _scalar(row.get(key)) for key in columns} for row in rows]
    temporary = path.with_name(f".{path.name}.tmp")
    pd.DataFrame(flat, columns=columns).to_parquet(temporary, index=False)
    temporary.replace(path)
    return path


def _scalar(value):
    return json.dumps(value) if isinstance(value, (list, dict)) else value
