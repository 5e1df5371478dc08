"""Trajectories as a tidy pandas step table (one row per executed action) plus a per-run table.

`load_steps(paths)` takes files or folders (searched recursively), reads each with the scaffold readers and
labels every action with the STEPS.md rubric, in order (`scaffolds.steps.sequence`). A file that cannot be read is
reported in `errors` by name and the others are still analysed, so one truncated run never hides a batch.

Files touched are inferred only where the command says so plainly (see `files_touched`); anything subtler
(python scripts that open files, globs, `find -exec`) is left out rather than guessed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import NamedTuple

import pandas as pd

from repoanchor.evals.analysis.run_context import RunContext, context_of
from repoanchor.scaffolds.steps.classify import Label
from repoanchor.scaffolds.steps.sequence import action_text, labels_in_order
from repoanchor.scaffolds.steps.shell import ShellParseError, split_commands
from repoanchor.scaffolds.steps.vocabulary import WRAPPERS
from repoanchor.scaffolds.trajectories.readers import read_trajectory
from repoanchor.scaffolds.trajectories.trajectory import Action, Trajectory, TrajectoryError, load

STEP_COLUMNS = (
    "run", "unit", "condition", "instance_id", "step_index", "tool", "command", "category", "phase",
    "decided_by", "rule", "files_read", "files_edited", "exit_code",
)  # fmt: skip
RUN_COLUMNS = (
    "run", "unit", "condition", "instance_id", "source_format", "exit_status", "steps", "input_tokens", "output_tokens",
    "cost", "api_calls",
)  # fmt: skip
# What a folder is searched for: mini-swe-agent's raw files, OpenCode's event streams and exports, and the
# normalised `trajectory.json` our adapters write. Other JSON beside them (resolved.json, run.json, task.json)
# is not a trajectory. A folder holding `trajectory.json` is one run: its raw files are the same run again.
FOLDER_PATTERNS = ("*.traj.json", "*.events.jsonl", "*.export.json", "trajectory.json")
NORMALISED = "trajectory.json"
# SWE-bench images check the repository out at /testbed; agents mix `/testbed/x.py` and `x.py` for one file.
REPO_PREFIXES = ("/testbed/",)
GENERIC_NAMES = {"trajectory", "mini", "opencode"}
# Options of the reading commands that take a separate value (so the value is not mistaken for a file).
VALUE_OPTIONS = {
    "head": {"-n", "-c", "--lines", "--bytes"}, "tail": {"-n", "-c", "--lines", "--bytes"},
    "sed": {"-e", "-f", "-l", "--expression", "--file"}, "awk": {"-F", "-v", "-f"},
    "perl": {"-e", "-E"}, "grep": {"-e", "-f", "-m", "-A", "-B", "-C", "--regexp", "--file", "--max-count"},
    "rg": {"-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "-T", "--glob", "--type", "--regexp"},
}  # fmt: skip
VALUE_OPTIONS.update(egrep=VALUE_OPTIONS["grep"], fgrep=VALUE_OPTIONS["grep"], ag=VALUE_OPTIONS["rg"])
READERS = {"cat", "nl", "less", "more", "bat", "tac", "head", "tail"}
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


class StepsFrame(NamedTuple):
    steps: pd.DataFrame
    """One row per executed action, columns `STEP_COLUMNS`; `files_read`/`files_edited` are tuples of paths."""
    runs: pd.DataFrame
    """One row per trajectory read, columns `RUN_COLUMNS` (tokens and cost NA when the scaffold did not say)."""
    errors: list[TrajectoryError]
    """Files that could not be read; each message starts with the file's path."""
    superseded: list[str] = []
    """Trajectories of matrix attempts that were retried (an infrastructure failure): not analysed."""


def collect(paths: list[str | Path]) -> tuple[list[Path], list[TrajectoryError]]:
    """Files named directly, plus the trajectory files found under folders (sorted, so runs keep one order).

    A folder with no trajectory file is an error too: it is usually a mistyped or not-yet-written run folder.
    """
    found: list[Path] = []
    empty: list[TrajectoryError] = []
    for path in map(Path, paths):
        if not path.is_dir():
            found.append(path)  # a missing file is reported by the reader, not dropped here
            continue
        matches = {match for pattern in FOLDER_PATTERNS for match in path.rglob(pattern) if match.is_file()}
        runs = {match.parent for match in matches if match.name == NORMALISED}
        found += sorted(m for m in matches if m.name == NORMALISED or m.parent not in runs)
        if not matches:
            empty.append(TrajectoryError(path, f"folder holds no trajectory file ({', '.join(FOLDER_PATTERNS)})"))
    return found, empty


def read_any(path: Path) -> Trajectory:
    """A scaffold file of any supported format, or our normalised `trajectory.json`."""
    try:
        return read_trajectory(path)
    except TrajectoryError:
        if path.name != NORMALISED:
            raise
        return load(path)


def resolved_conditions(conditions: Mapping[str | Path, str] | None) -> dict[Path, str]:
    """The mapping with resolved paths as keys (resolved once per batch: resolving per file made it quadratic)."""
    return {Path(key).resolve(): value for key, value in (conditions or {}).items()}


def condition_of(path: Path, lookup: Mapping[Path, str], context: RunContext | None = None) -> str:
    """The condition `lookup` (see `resolved_conditions`) gives the file or its nearest listed folder; else the
    matrix unit's condition; else the parent folder's name."""
    if lookup:
        for candidate in (path.resolve(), *path.resolve().parents):
            if candidate in lookup:
                return lookup[candidate]
    if context is not None and context.condition:
        return context.condition
    return path.parent.name


def instance_of(trajectory: Trajectory, path: Path, context: RunContext | None = None) -> str | None:
    """The matrix unit's source instance (what its runs pair on across suites); else the recorded instance id;
    else the file name (`x.traj.json` → `x`) unless it is a generic run file."""
    if context is not None and context.instance_id:
        return context.instance_id
    if trajectory.instance_id:
        return trajectory.instance_id
    stem = path.name.split(".")[0]
    return None if stem in GENERIC_NAMES else stem


def _path(word: str) -> str | None:
    """A normalised file path, or None when the word is no literal path (option, glob, variable, device)."""
    if not word or word.startswith("-") or any(c in word for c in "*?[$`{") or "__SUBST__" in word:
        return None
    if word.startswith("/dev/") or word in (".", ".."):
        return None
    for prefix in REPO_PREFIXES:
        word = word[len(prefix) :] if word.startswith(prefix) else word
    return posixpath.normpath(word)


def _operands(name: str, args: list[str]) -> tuple[list[str], bool]:
    """(positional arguments, whether a script/pattern was given by option) for one command."""
    takes_value, positional, by_option, skip = VALUE_OPTIONS.get(name, set()), [], False, False
    for arg in args:
        if skip:
            skip = False
        elif arg in takes_value:
            skip, by_option = True, by_option or arg in ("-e", "-f", "--expression", "--regexp", "--file", "-E")
        elif not arg.startswith("-") or arg == "-":
            positional.append(arg)
    return positional, by_option


def _shell_files(command: str) -> tuple[list[str], list[str]]:
    """(read, edited) by the simple commands of a bash line; see the module docstring for the scope."""
    read, edited = [], []
    try:
        commands = split_commands(command)
    except ShellParseError:
        return read, edited
    for cmd in commands:
        edited += cmd.writes  # `> f`, `>> f`, `cat > f <<EOF`
        words = list(cmd.words)
        while words and (re.match(r"^\w+=", words[0]) or words[0] in WRAPPERS):
            words.pop(0)
        if not words:
            continue
        name, args = PurePosixPath(words[0]).name, words[1:]
        positional, by_option = _operands(name, args)
        in_place = any(re.match(r"^-[a-zA-Z]*i", a) or a.startswith("--in-place") for a in args)
        if name in READERS:
            read += positional
        elif name in ("sed", "awk", "perl"):
            files = positional if by_option else positional[1:]  # the first operand is the script
            (edited if in_place and name != "awk" else read).extend(files)
        elif name in ("grep", "egrep", "fgrep", "rg", "ag"):
            files = positional if by_option else positional[1:]  # the first operand is the pattern
            read += [f for f in files if PurePosixPath(f).suffix]  # directories (no extension) are searched
        elif name == "tee":
            edited += positional
    return read, edited


def _clean(words: list[str]) -> tuple[str, ...]:
    """Normalised literal paths, first-seen order, no repeats."""
    return tuple(dict.fromkeys(path for path in map(_path, words) if path))


def files_touched(action: Action) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(files read, files edited) by one action, in first-seen order without repeats.

    bash: `cat/nl/less/more/head/tail FILE`, `sed -n SCRIPT FILE`, `awk PROG FILE` and `grep PATTERN FILE`
    (operands with an extension only: grep is usually given directories) are reads; redirections, `tee FILE`,
    `sed -i`/`perl -i` are edits. OpenCode: `read` and `edit/write/multiedit` take `filePath`; `apply_patch`
    names its files in `*** Update File:` lines. grep/glob/list tools search folders, so they read no file.
    """
    tool = action.tool.lower()
    if action.command is not None and tool in ("bash", "shell", "sh"):
        read, edited = _shell_files(action.command)
    else:
        given = action.tool_input.get("filePath") or action.tool_input.get("file_path")
        given = [given] if isinstance(given, str) else []
        read = given if tool == "read" else []
        edited = given if tool in ("edit", "write", "multiedit") else []
        if tool in ("apply_patch", "patch"):
            edited = PATCH_FILE.findall(str(action.tool_input.get("patchText") or action.tool_input.get("patch")))
    return _clean(read), _clean(edited)


def _step(run: str, unit: str, condition: str, instance: str | None, action: Action, label: Label) -> dict:
    text = action_text(action)
    read, edited = files_touched(action)
    return {
        "run": run, "unit": unit, "condition": condition, "instance_id": instance, "step_index": action.index,
        "tool": action.tool, "command": text, "category": label.category, "phase": label.phase,
        "decided_by": label.decided_by, "rule": label.rule, "files_read": read, "files_edited": edited,
        "exit_code": action.exit_code,
    }  # fmt: skip


def load_steps(paths: list[str | Path], conditions: Mapping[str | Path, str] | None = None) -> StepsFrame:
    """Read every trajectory under `paths` into (steps, runs, errors); see the module docstring."""
    files, errors = collect(paths)
    lookup = resolved_conditions(conditions)
    steps, runs, superseded = [], [], []
    for path in files:
        context = context_of(path)
        if context is not None and context.superseded:
            superseded.append(str(path))
            continue
        try:
            trajectory = read_any(path)
        except TrajectoryError as error:
            errors.append(error)
            continue
        run, unit = str(path), context.unit if context is not None else str(path)
        condition, instance = condition_of(path, lookup, context), instance_of(trajectory, path, context)
        labels = labels_in_order(trajectory.actions, instance)
        steps += [_step(run, unit, condition, instance, *pair) for pair in zip(trajectory.actions, labels, strict=True)]
        runs.append(
            {
                "run": run,
                "unit": unit,
                "condition": condition,
                "instance_id": instance,
                "source_format": trajectory.source_format,
                "exit_status": trajectory.exit_status,
                "steps": len(trajectory.actions),
                "input_tokens": trajectory.input_tokens,
                "output_tokens": trajectory.output_tokens,
                "cost": trajectory.cost,
                "api_calls": trajectory.api_calls,
            }  # fmt: skip
        )
    step_frame = pd.DataFrame(steps, columns=list(STEP_COLUMNS)).astype({"step_index": "int64", "exit_code": "Int64"})
    run_frame = pd.DataFrame(runs, columns=list(RUN_COLUMNS)).astype(
        {"steps": "int64", "input_tokens": "Int64", "output_tokens": "Int64", "cost": "Float64", "api_calls": "Int64"}
    )
    return StepsFrame(step_frame, run_frame, errors, superseded)
