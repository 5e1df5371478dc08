"""Every command answers a mistake in one line: `error: ...` on stderr, exit 2, no traceback, nothing written.

One table of bad invocations across the whole command line, run in-process (typer's runner) in a folder
holding small inputs; the folder's listing and contents must be the same afterwards."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app

TREE = {"tree/pkg/mod.py": "def f(x):\n    if x:\n        return 1\n    return 2\n"}
ROW = {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "x", "problem_statement": "p"}
INPUTS = {
    **TREE,
    "row.jsonl": json.dumps(ROW) + "\n",
    "empty.jsonl": "",
    "bad.jsonl": "not json\n",
    "bad.yaml": "scaffolds: [mini\n",
    "strings.yaml": "suites: [suite]\nscaffolds: [mini]\nmodels: [openai/gpt-4o]\n",
    "typo.yaml": "suites: [suite]\nscaffolds: [mini]\nmodels: [{name: m}]\nrepeets: 2\n",
    "aider.yaml": "suites: [suite]\nscaffolds: [aider]\nmodels: [{name: m}]\n",
    "keyless.yaml": "tasks: [tree]\nscaffolds: [mini]\nmodels: [{name: gpt, model: openai/gpt-4o}]\nout: mout\n",
    "traj.json": json.dumps({"a": 1}),
    "issue.txt": "Fix f.\n",
    "emptydir/.keep": "",
    "done/result.txt": "an earlier result\n",
    "ok.jsonl": (Path(__file__).parents[2] / "examples" / "dataset-row.jsonl").read_text(),
    "resumed/.build/header.json": "{}",
}

# (arguments, exit code, a fragment of the one error line)
CASES = [
    # the root
    ("nosuchcommand", 2, "No such command 'nosuchcommand'"),
    ("--bogus", 2, "No such option: --bogus"),
    # perturb
    ("perturb list --bogus", 2, "No such option: --bogus (perturb list)"),
    ("perturb apply tree o1 --transform nope", 2, "unknown transform 'nope'; known: if-else-swap"),
    ("perturb apply missing o1 --transform if-else-swap", 2, "source tree"),
    ("perturb apply tree o1", 2, "Missing option '--transform'"),
    ("perturb apply tree o1 -t if-else-swap --fraction 2", 2, "--fraction must be in (0, 1]"),
    ("perturb apply tree o1 -t if-else-swap --option for-to-while.zzz=1", 2, "options for for-to-while"),
    ("perturb apply tree o1 -t proxy-imports --option proxy-imports.dpeth=2", 2, "dpeth"),
    ("perturb apply tree o1 -t if-else-swap --option nodot", 2, "nodot"),
    ("perturb apply tree o1 -t if-else-swap --seed abc", 2, "Invalid value for '--seed': Input should be a valid"),
    ("perturb apply tree tree -t if-else-swap", 2, "tree"),
    ("perturb apply tree o1 -t if-else-swap --target pkg/nothere.py", 2, "pkg/nothere.py is not a file in tree"),
    ("perturb sample tree v1 --gold-files pkg/gone.py", 2, "Invalid value for --gold-files: pkg/gone.py is not a file"),
    ("perturb validate tree missing --test-cmd true", 2, "missing is not a directory"),
    ("perturb validate tree tree", 2, "Missing option '--test-cmd'"),
    ("perturb sample tree v1 --issue nothere.txt", 2, "No such file or directory (nothere.txt)"),
    ("perturb sample tree v1 -n 0", 2, "Invalid value for '-n'"),
    ("perturb sample tree v1 --keywords-fallback maybe", 2, "'maybe' is not one of 'error', 'offline'"),
    ("perturb sample tree v1 --phi 0", 2, "Input should be greater than 0 (SamplerConfig:phi)"),
    ("perturb check-catalogue missing cat", 2, "Missing option '--test-cmd'"),
    # suite
    ("suite build missing.jsonl --out s1", 2, "missing.jsonl: no such file or folder"),
    ("suite build empty.jsonl --out s1", 2, "no usable row: the source is empty (empty.jsonl)"),
    ("suite build ok.jsonl --out done", 2, "done exists and is not a suite build folder"),
    ("suite build ok.jsonl --seed 3 --out resumed", 2, "resumed holds a build of another dataset or config"),
    ("suite build bad.jsonl --suite original --out s1", 2, "no usable row: 1 refused, first line 1: not JSON"),
    ("suite build row.jsonl --out s1", 2, "first line 1 (a__b-1): missing or empty patch, test_patch (row.jsonl)"),
    ("suite build row.jsonl --suite perturbb --out s1", 2, "'perturbb' is not one of 'perturb', 'spt'"),
    ("suite build row.jsonl --provider docker --out s1", 2, "'docker' is not one of 'local', 'image'"),
    ("suite build row.jsonl --sampler {bad --out s1", 2, "--sampler: neither a JSON object nor a JSON file"),
    ("suite build row.jsonl --suite original --transform if-else-swap --out s1", 2, "the original suite"),
    ("suite build row.jsonl --stratify repo --out s1", 2, "--stratify needs --sample N"),
    ("suite build row.jsonl --suite spt --sampler '{\"ntt\":2}' --out s1", 2, "unknown sampler field(s) ntt; valid: n"),
    ("suite build row.jsonl --suite extend --extend '{\"familes\":1}'", 2, "unknown extend field(s) familes; valid"),
    ("suite build row.jsonl --fraction 2 --out s1", 2, "less than or equal to 1 (SuiteConfig:fraction)"),
    ("suite build row.jsonl --option if-else-swap.zzz=1 --out s1", 2, "--transform/--option"),
    ("suite validate emptydir", 2, "not a built suite folder (no manifest.json)"),
    ("suite validate nothere", 2, "not a built suite folder"),
    ("suite validate emptydir --provider cloud", 2, "'cloud' is not one of 'local', 'image', 'auto'"),
    ("suite images emptydir --bogus", 2, "No such option: --bogus"),
    # images
    ("images build", 2, "Missing argument 'dataset'"),
    ("images build ok.jsonl --instances fixture__ledger-1,x__y-2 -i z__w-3", 2, "not in ok.jsonl: x__y-2, z__w-3"),
    ("suite build row.jsonl --instances a__b-1 --instances re:a", 2, "'re:a' must be given alone"),
    # eval
    ("eval missing.yaml", 2, "missing.yaml: cannot read the config"),
    ("eval bad.yaml", 2, "bad.yaml: cannot read the config: while parsing a flow sequence"),
    ("eval strings.yaml", 2, "a model is a mapping, e.g. {name: gpt-4o, model: openai/gpt-4o}"),
    ("eval typo.yaml", 2, "typo.yaml: repeets: Extra inputs are not permitted (valid: suites, suite_repeats"),
    ("eval aider.yaml", 2, "unknown scaffold(s) ['aider']"),
    ("eval keyless.yaml", 2, "model openai/gpt-4o needs OPENAI_API_KEY, which is not set (keyless.yaml:models[0])"),
    ("eval keyless.yaml --executor nope", 2, "'nope' is not one of 'local', 'ray'"),
    ("eval keyless.yaml --workers 0", 2, "Invalid value for '--workers'"),
    # run
    ("run tree", 2, "give the model, e.g. --model openai/gpt-4o"),
    ("run tree --model openai/gpt-4o", 2, "model openai/gpt-4o needs OPENAI_API_KEY, which is not set (--model)"),
    ("run tree --model m --scaffold aider", 2, "'aider' is not one of 'mini', 'mini-swe-agent', 'opencode'"),
    ("run tree --model m --hints loud", 2, "'loud' is not one of 'none', 'structural'"),
    ("run tree --model m --env cloud", 2, "'cloud' is not one of 'auto', 'image', 'docker', 'local'"),
    ("run tree --model m --anchor-budget half", 2, "'half' is not one of 'separate', 'shared'"),
    ("run tree --model m --price 2.5", 2, "is not INPUT,OUTPUT"),
    ("run tree --model m --out done", 2, "done already exists; give --force"),
    ("run missing --model m --cost-limit 0", 2, "neither a task directory nor DATASET#INSTANCE_ID"),
    # steps, analyze, results, grade, export, import, demo, presets
    ("steps missing.json", 2, "path 'missing.json' does not exist"),
    ("steps traj.json", 2, "traj.json"),
    ("analyze missing --out a1", 2, "path 'missing' does not exist"),
    ("analyze traj.json --out done", 2, "done already exists; give --force"),
    ("analyze traj.json --out a1 --condition nameless", 2, "expected PATH=NAME, got 'nameless'"),
    ("results missing --out r1", 2, "missing: cannot read the config"),
    ("results missing --out done", 2, "done already exists; give --force"),
    ("export preds missing --out done", 2, "done already exists; give --force"),
    ("grade missing.yaml", 2, "missing.yaml: cannot read the config"),
    ("grade keyless.yaml --test-edits maybe", 2, "'maybe' is not one of 'strip', 'refuse', 'keep'"),
    ("grade keyless.yaml --provider cloud", 2, "'cloud' is not one of 'auto', 'image', 'local'"),
    ("export preds missing --out p1", 2, "missing: cannot read the config"),
    ("export atif traj.json", 2, "Missing option '--out'"),
    ("import missing", 2, "Missing option '--out'"),
    ("demo --model openai/gpt-4o --out d1", 2, "model openai/gpt-4o needs OPENAI_API_KEY"),
    ("presets show --bogus", 2, "No such option: --bogus"),
]


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"/" for p in sorted(root.rglob("*"))}


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch) -> Path:
    for name, text in INPUTS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_the_table_covers_every_command():
    commands = {" ".join(word for word in shlex.split(args)[:2] if not word.startswith("-")) for args, _, _ in CASES}
    tops = {c.split()[0] for c in commands if c}
    assert len(CASES) >= 40
    assert tops >= {"perturb", "suite", "images", "eval", "run", "steps", "analyze", "results", "grade", "export"}
    assert tops >= {"import", "demo", "presets"}


@pytest.mark.parametrize(("args", "code", "fragment"), CASES, ids=[case[0] for case in CASES])
def test_a_mistake_is_one_line_exit_2_and_writes_nothing(inputs: Path, args: str, code: int, fragment: str):
    before = snapshot(inputs)
    result = CliRunner().invoke(app, shlex.split(args))
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == code, result.output
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert fragment in lines[0]
    assert "Traceback" not in result.output
    assert "pydantic.dev" not in result.output
    assert snapshot(inputs) == before


def test_debug_adds_the_traceback_and_version_prints_one(inputs: Path):
    plain = CliRunner().invoke(app, ["perturb", "sample", "tree", "v1", "--issue", "nothere.txt"])
    traced = CliRunner().invoke(app, ["--debug", "perturb", "sample", "tree", "v1", "--issue", "nothere.txt"])
    assert plain.exit_code == traced.exit_code == 2
    assert "Traceback" not in plain.stderr
    assert "Traceback" in traced.stderr
    assert traced.stderr.strip().endswith("No such file or directory (nothere.txt)")
    version = CliRunner().invoke(app, ["--version"])
    assert version.exit_code == 0
    assert version.stdout.startswith("repoanchor 0.")
