"""Regenerates evals/fixture/dataset.jsonl from INSTANCES (instances.py): `python tests/support/fixture_build/build.py`.

Each instance's gold and test patches are the diffs of scripted edits on the fixture repository.
"""
import json, subprocess, shutil, sys, tempfile
from pathlib import Path
from repoanchor.evals.demo import fixture_project as fp  # noqa

HERE = Path(__file__).parent
work = Path(tempfile.mkdtemp(prefix="fixture-build-"))
base = work / "base"
commit = fp.make_fixture_repo(base)
print("commit", commit)

def edit(repo, rel, old, new):
    p = repo / rel; t = p.read_text()
    assert t.count(old) == 1, (rel, old)
    p.write_text(t.replace(old, new))

def append(repo, rel, text):
    p = repo / rel; p.write_text(p.read_text() + text)

def diff(edits):
    repo = work / "scratch"; shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(base, repo)
    for e in edits: e(repo)
    out = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True, check=True).stdout
    return out

exec((HERE / "instances.py").read_text())

rows = []
for inst in INSTANCES:
    row = {
        "repo": fp.REPO_NAME,
        "instance_id": inst["instance_id"],
        "base_commit": commit,
        "patch": diff(inst["gold"]),
        "test_patch": diff(inst["tests"]),
        "problem_statement": inst["problem_statement"],
        "hints_text": inst["hints_text"],
        "created_at": inst["created_at"],
        "version": "0.3",
        "FAIL_TO_PASS": json.dumps(inst["f2p"]),
        "PASS_TO_PASS": json.dumps(inst["p2p"]),
        "environment_setup_commit": commit,
        "repoanchor_test_cmd": "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -rA -p no:cacheprovider {tests}",
        "repoanchor_log_parser": "pytest",
    }
    if "wrong" in inst:
        (work / f"{inst['instance_id']}.wrong.diff").write_text(diff(inst["wrong"]))
    rows.append(row)
fp.DATASET_PATH.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
