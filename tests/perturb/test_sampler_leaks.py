"""Nothing of the build leaks into a sampled variant: no metadata, seed, issue text or tool marker in
the tree, a single fresh commit, no generated name shared between seeds; and the CLI end to end."""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.sampler.build import sample
from repoanchor.perturb.sampler.sampler import SamplerConfig
from repoanchor.perturb.source.files import TEST_PATTERNS
from repoanchor.perturb.transforms import SPT_IDS
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer
from tests.support.toy_project import write_toy_project

SENTINEL = "Zebra quartz lullaby happens in total_0"
ISSUE = f"{SENTINEL}.\n`total_0()` returns the label 'total of items' twice.\n"
EXE = str(Path(sys.executable).with_name("repoanchor"))
GOLD = ["pkg/m0.py"]
IGNORED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))


def _git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def toy_repo(tmp_path_factory) -> Path:
    """The toy project as a git repository with a history that must never reach a variant."""
    root = write_toy_project(tmp_path_factory.mktemp("toy") / "src")
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a"}
    env["GIT_COMMITTER_EMAIL"] = "a@b"
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "SECRET-HISTORY gold patch here"]):
        subprocess.run(["git", *cmd], cwd=root, env=env, check=True)
    return root


def _files(root: Path, *, with_git: bool = False) -> dict[str, Path]:
    return {
        p.relative_to(root).as_posix(): p
        for p in root.rglob("*")
        if p.is_file() and (with_git or ".git" not in p.relative_to(root).parts)
    }


def _bound_names(code: str) -> set[str]:
    """Names a module binds: assignment targets, defs, classes, parameters, import aliases."""
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return names


def generated_names(src: Path, variant: Path, keywords: set[str]) -> set[str]:
    """Names bound in the variant that appear nowhere in the source, plus new module names."""
    before, after = _files(src), _files(variant)
    source_text = "\n".join(p.read_text(errors="replace") for r, p in before.items() if r.endswith(".py"))
    new = {n for r, p in after.items() if r.endswith(".py") for n in _bound_names(p.read_text())}
    new |= {Path(r).stem for r in after.keys() - before.keys()}
    return {n for n in new if n not in source_text} - IGNORED - keywords


def test_variant_tree_holds_nothing_of_the_build_and_one_fresh_commit(toy_repo: Path, tmp_path: Path):
    config = SamplerConfig(n=4, seed=21, catalogue=list(SPT_IDS), gold_files=["pkg/m3.py"])
    metas = sample(toy_repo, tmp_path / "out", config, issue=ISSUE)
    source = _files(toy_repo)
    for meta in metas:
        tree = tmp_path / "out" / meta["variant_id"]
        files = _files(tree)
        assert files.keys() == source.keys()  # no metadata, keyword list or marker file added
        assert [r for r in files if not r.endswith(".py") and files[r].read_bytes() != source[r].read_bytes()] == []
        secrets = [str(meta["variant_seed"]), meta["variant_id"], SENTINEL, "SECRET-HISTORY", "repoanchor"]
        for rel, path in _files(tree, with_git=True).items():
            if "/objects/" not in rel:
                data = path.read_bytes()
                assert not [s for s in secrets if s.encode() in data], rel
        assert _git(tree, "rev-list", "--all", "--count").strip() == "1"
        assert _git(tree, "log", "--all", "--format=%an|%ae|%ad|%s", "--date=iso") == (
            "Maintainers|maintainers@example.com|2024-01-01 00:00:00 +0000|Initial commit\n"
        )
        assert _git(tree, "status", "--porcelain", "--ignored") == ""
        assert _git(tree, "rev-parse", "HEAD").strip() == meta["git"]["commit"]
        assert not any(SENTINEL in _git(tree, "show", f"HEAD:{rel}") for rel in files)
        assert [p for p in tree.rglob(".git") if p != tree / ".git"] == []


@pytest.mark.parametrize("transform", ["dead-code", "local-rename", "for-to-while", "dead-string-assign"])
def test_no_generated_name_is_a_fixed_marker(toy_repo: Path, tmp_path: Path, transform: str):
    """The prior tools' `_semantic_preserving_block`: a name found in every variant gives perturbation away."""
    seen = []
    for seed in range(5):
        config = SamplerConfig(n=1, nt=1, phi=1.0, seed=seed, catalogue=[transform], gold_files=["pkg/m0.py"])
        (meta,) = sample(toy_repo, tmp_path / str(seed), config, issue=ISSUE)
        seen.append(generated_names(toy_repo, tmp_path / str(seed) / meta["variant_id"], {"total of items"}))
    assert all(seen)
    assert set.intersection(*seen) == set()


def test_two_seeds_share_no_generated_name(toy_repo: Path, tmp_path: Path):
    """Small variants (one module each): the draws of two seeds are disjoint. See the report on naming.py's
    1,248-name vocabulary: at repository scale, birthday collisions make some overlap unavoidable."""
    names = []
    for seed in (1, 2):
        patterns = [*TEST_PATTERNS, "pkg/m[1-9].py"]  # one module in play keeps the draw small
        config = SamplerConfig(
            nt=2, phi=0.3, seed=seed, catalogue=["dead-code", "local-rename"], test_patterns=patterns, gold_files=GOLD
        )
        (meta,) = sample(toy_repo, tmp_path / str(seed), config, issue=ISSUE)
        names.append(generated_names(toy_repo, tmp_path / str(seed) / meta["variant_id"], set()))
    assert names[0]
    assert names[1]
    assert names[0].isdisjoint(names[1]), names[0] & names[1]


@pytest.mark.slow
@pytest.mark.xdist_group("toolz")
def test_two_seeds_share_no_generated_name_at_repository_scale(toolz_tree: Path, tmp_path: Path):
    names = []
    for seed in (0, 1):
        config = SamplerConfig(nt=1, seed=seed, catalogue=["dead-code"], gold_files=["toolz/itertoolz.py"])
        (meta,) = sample(toolz_tree, tmp_path / str(seed), config.model_copy(update={"check_interpreters": False}))
        names.append(generated_names(toolz_tree, tmp_path / str(seed) / meta["variant_id"], set()))
    assert names[0].isdisjoint(names[1]), sorted(names[0] & names[1])[:20]


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, "perturb", "sample", *args], capture_output=True, text=True, env=env, check=False)


def test_cli_end_to_end_is_deterministic_across_processes(toy_repo: Path, tmp_path: Path):
    (tmp_path / "issue.md").write_text(ISSUE)
    common = ["-n", "3", "--issue", str(tmp_path / "issue.md"), "--gold-files", "pkg/m1.py", "--seed", "5"]
    common += ["--nt", "2", "--phi", "0.5", "--nk", "2", "--nf", "3"]
    common += [arg for t in SPT_IDS for arg in ("-t", t)]
    runs = []
    for hash_seed, out in (("1", "a"), ("2", "b")):
        proc = _cli(str(toy_repo), str(tmp_path / out), *common, env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout))
    assert runs[0]["variants"] == runs[1]["variants"]
    assert runs[0]["built"] == 3
    ids = [v["variant_id"] for v in runs[0]["variants"]]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(ids + [f"{i}.json" for i in ids])
    for vid in ids:
        meta = json.loads((tmp_path / "a" / f"{vid}.json").read_text())
        assert (meta["sampler"]["nt"], meta["sampler"]["phi"], meta["sampler"]["nk"], meta["sampler"]["nf"]) == (
            2, 0.5, 2, 3
        )  # fmt: skip
        extraction = meta["keyword_extraction"]
        assert extraction is None or extraction["source"] == "offline"
        assert (tmp_path / "a" / f"{vid}.json").read_bytes() == (tmp_path / "b" / f"{vid}.json").read_bytes()
        assert _git(tmp_path / "a" / vid, "rev-parse", "HEAD") == _git(tmp_path / "b" / vid, "rev-parse", "HEAD")
        test = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
            cwd=tmp_path / "a" / vid,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        )
        assert test.returncode == 0, test.stdout


def test_cli_reports_failures_and_refuses_build_inputs_inside_src(toy_repo: Path, tmp_path: Path):
    bad = "repoanchor.perturb.transforms.nowhere.Nothing"
    proc = _cli(str(toy_repo), str(tmp_path / "o"), "-n", "6", "--nt", "1", "-t", "dead-code", "-t", bad)
    assert proc.returncode == 1
    summary = json.loads(proc.stdout)
    assert summary["failed"] >= 1
    assert summary["built"] >= 1
    assert summary["failed"] + summary["built"] == 6
    assert "failed" in proc.stderr
    inside = _cli(str(toy_repo), str(tmp_path / "p"), "--issue", str(toy_repo / "README.md"))
    assert inside.returncode == 2
    assert not (tmp_path / "p").exists()


def test_cli_keywords_from_a_model_through_litellm(toy_repo: Path, tmp_path: Path):
    answer = json.dumps({"methods": ["total_0"], "string_literals": ["total of items"]})
    args = ["-n", "2", "--nt", "2", "-t", "dead-method", "-t", "dead-string-assign", "--issue", str(tmp_path / "i")]
    (tmp_path / "i").write_text(ISSUE)
    env = {**os.environ, "OPENAI_API_KEY": "sk-dummy-cli-key-000000"}
    with ScriptedServer([answer]) as server:
        args += ["--model", "openai/scripted", "--api-base", server.base_url, "--keywords-cache", str(tmp_path / "kc")]
        for out in ("a", "b"):
            proc = _cli(str(toy_repo), str(tmp_path / out), *args, env=env)
            assert proc.returncode == 0, proc.stderr
        assert len(server.requests) == 1  # one call per instance; the rerun hit the cache
    meta = json.loads((tmp_path / "a" / f"{json.loads(proc.stdout)['variants'][0]['variant_id']}.json").read_text())
    assert meta["keyword_extraction"]["source"] == "llm"
    assert meta["plan"]["keywords"] == {"dead-method": ["total_0"], "dead-string-assign": ["total of items"]}
    assert "sk-dummy-cli-key" not in "".join(p.read_text() for p in (tmp_path / "kc").iterdir())


def test_cli_a_failing_keyword_model_stops_the_batch_unless_the_offline_fallback_is_asked_for(toy_repo, tmp_path):
    (tmp_path / "i").write_text(ISSUE)
    args = ["-n", "1", "--nt", "1", "-t", "dead-method", "--issue", str(tmp_path / "i")]
    env = {**os.environ, "OPENAI_API_KEY": "sk-dummy-cli-key-000000"}
    with ScriptedServer([Reply(status=500), Reply(status=500)]) as server:
        args += ["--model", "openai/scripted", "--api-base", server.base_url, "--keywords-cache", str(tmp_path / "kc")]
        stopped = _cli(str(toy_repo), str(tmp_path / "a"), *args, env=env)
        assert stopped.returncode == 2, stopped.stderr
        assert "--keywords-fallback offline" in stopped.stderr
        assert not (tmp_path / "a").exists() or not any((tmp_path / "a").iterdir())
        fallen = _cli(str(toy_repo), str(tmp_path / "b"), *args, "--keywords-fallback", "offline", env=env)
    assert fallen.returncode == 0, fallen.stderr
    summary = json.loads(fallen.stdout)
    assert summary["keywords"]["source"] == "offline"
    assert "llm call failed" in summary["keywords"]["reason"]
    assert "keywords: offline (llm call failed" in fallen.stderr
