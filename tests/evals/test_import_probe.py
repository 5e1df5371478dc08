"""The level-1 import check forks per package instead of re-importing it per module: the same verdicts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from repoanchor.evals.harness.env_spec import EnvSpec
from repoanchor.evals.suites.checks.level1 import import_errors, module_names
from repoanchor.perturb.validation.isolation import offline_unavailable

HOST = EnvSpec(provider="local", instance_id="probe", route="current", python=sys.executable)

TREE = {
    "pkg/__init__.py": "import json\n",
    "pkg/ok.py": "X = 1\n",
    "pkg/raises.py": "raise ValueError('boom')\n",
    "pkg/exits.py": "raise SystemExit(3)\n",
    # Order-dependent cycle: cyc_x fails from scratch, cyc_y imports (and would make cyc_x import after it).
    "pkg/cyc_x.py": "from pkg.cyc_y import Y\nX = 1\n",
    "pkg/cyc_y.py": "Y = 2\nfrom pkg.cyc_x import X\n",
    # A failed import leaves pkg.half half-initialised; from scratch uses_half fails too.
    "pkg/half.py": "import pkg.ok\nraise RuntimeError('after ok')\n",
    "pkg/uses_half.py": "import pkg.half\n",
    # Siblings never see each other's side effects on their shared parent.
    "pkg/sets_flag.py": "import pkg\npkg.flag = True\n",
    "pkg/reads_flag.py": "import pkg\nassert not hasattr(pkg, 'flag'), 'a sibling leaked'\n",
    "pkg/broken/__init__.py": "raise ImportError('no such dependency')\n",
    "pkg/broken/leaf.py": "X = 1\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": "from pkg.ok import X\n",
    "pkg/sub/deeper/__init__.py": "from ..deep import X\n",
    "pkg/sub/deeper/leaf.py": "from pkg.sub.deeper import X\n",
    "other/__init__.py": "import pkg.raises\n",
    "other/mod.py": "Y = 1\n",
}
FAILING = {"pkg.raises", "pkg.exits", "pkg.cyc_x", "pkg.half", "pkg.uses_half", "pkg.broken", "pkg.broken.leaf"}
FAILING |= {"other", "other.mod"}


def write(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return module_names(tmp_path, sorted(files))


@pytest.mark.parametrize(("strategy", "jobs"), [("fork", 1), ("fork", 3), ("fork", 8), ("isolated", 1)])
def test_each_module_is_judged_as_from_a_fresh_interpreter(tmp_path, strategy, jobs):
    modules = write(tmp_path, TREE)
    errors = import_errors(tmp_path, modules, HOST, timeout=60, strategy=strategy, jobs=jobs)
    assert set(errors) == FAILING
    assert errors["pkg.raises"] == "ValueError: boom"
    assert errors["pkg.exits"] == "SystemExit: 3"
    assert "cannot import name 'X'" in errors["pkg.cyc_x"]
    assert errors["pkg.uses_half"] == "RuntimeError: after ok"
    assert errors["pkg.broken.leaf"] == "ImportError: no such dependency"


@pytest.mark.parametrize("jobs", [1, 4])
def test_both_strategies_give_the_same_messages(tmp_path, jobs):
    modules = write(tmp_path, TREE)
    forked = import_errors(tmp_path, modules, HOST, timeout=60, strategy="fork", jobs=jobs)
    assert forked == import_errors(tmp_path, modules, HOST, timeout=60, strategy="isolated")


def _waits_for(other: str) -> str:
    """A module that marks its import and then needs its sibling's mark while it is still importing."""
    return (
        "import os, time\n"
        "here = os.path.dirname(os.path.dirname(__file__))  # the tree, above the package\n"
        "open(os.path.join(here, __name__.split('.')[-1] + '.mark'), 'w').close()\n"
        "deadline = time.monotonic() + 60\n"
        f"while not os.path.exists(os.path.join(here, {other!r} + '.mark')):\n"
        "    assert time.monotonic() < deadline, 'no sibling ran beside this one'\n"
        "    time.sleep(0.01)\n"
    )


def test_siblings_import_side_by_side_and_a_crash_among_them_is_still_judged(tmp_path):
    """With two jobs, two sibling packages import at once (each waits for the other's mark, which only a sibling
    running beside it can make: the first takes the free slot, the second runs in the parent's own turn); a
    sibling after them that kills its process is still retried and reported, and the packages after it judged."""
    tree = {
        "a_left/__init__.py": _waits_for("b_right"), "b_right/__init__.py": _waits_for("a_left"),
        "dies/__init__.py": "import os\nos._exit(7)\n", "later/__init__.py": "", "later/mod.py": "X = 1\n",
    }  # fmt: skip
    modules = write(tmp_path, tree)
    errors = import_errors(tmp_path, modules, HOST, timeout=300, strategy="fork", jobs=2)
    assert set(errors) == {"dies"}
    assert errors["dies"].startswith("import crashed")


def test_a_module_that_kills_its_interpreter_no_longer_takes_the_others_with_it(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    tree = tmp_path / "tree"
    modules = write(tree, {**TREE, "pkg/dies.py": "import os\nos._exit(7)\n"})
    forked = import_errors(tree, modules, HOST, timeout=60, strategy="fork")
    assert set(forked) == FAILING | {"pkg.dies"}
    assert forked["pkg.dies"].startswith("import crashed")
    isolated = import_errors(tree, modules, HOST, timeout=60, strategy="isolated")
    assert set(isolated) == set(modules)  # one crash, every module unjudged
    assert all(error.startswith("import check crashed") for error in isolated.values())
    assert not list(scratch.iterdir())  # the dead probe's bytecode folder went with the caller's temporary folder


SHARED = {
    "pkg/__init__.py": "",
    "pkg/a_compiles.py": "import pkg.leaf\n",
    "pkg/leaf.py": "X = 1\n",
    # Imported after its sibling (children go in name order): the sibling's import compiled pkg/leaf.py.
    "pkg/z_reuses.py": (
        "import importlib.util, os, sys\n"
        "leaf = os.path.join(os.path.dirname(__file__), 'leaf.py')\n"
        "assert os.path.isfile(importlib.util.cache_from_source(leaf)), 'pkg/leaf.py compiled again'\n"
        "assert sys.pycache_prefix and not sys.pycache_prefix.startswith(os.path.dirname(__file__))\n"
    ),
}


@pytest.mark.parametrize("strategy", ["fork", "isolated"])
def test_bytecode_is_shared_outside_the_tree_and_removed(tmp_path, monkeypatch, strategy):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # where the check's interpreter makes its bytecode prefix
    tree = tmp_path / "tree"
    modules = write(tree, SHARED)  # one job: z_reuses imports after its siblings have
    assert import_errors(tree, modules, HOST, timeout=60, strategy=strategy, jobs=1) == {}
    assert not list(tree.rglob("__pycache__"))  # the checked tree is left as it was
    assert not list(scratch.iterdir())  # and the prefix is gone


def test_a_venvs_kept_bytecode_holds_its_libraries_and_nothing_of_a_checked_tree(tmp_path):
    """A local venv's checks keep the bytecode of what is installed (compiled once, not on every check) beside the
    venv; the checked tree's own is removed before and after, so a new tree at the same path, its file the same
    size and age, is never judged on the old one's bytecode."""
    import os
    import subprocess

    from repoanchor.evals.suites.checks.level1 import bytecode_folder

    venv = tmp_path / "venvs" / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = EnvSpec(provider="local", instance_id="probe", route="spec", python=python, venv=str(venv))
    kept = Path(bytecode_folder(env))
    assert kept == venv.parent / "env.pycache"
    tree = tmp_path / "tree"
    modules = write(tree, {**TREE, "pkg/uses_lib.py": "import fractions\n"})  # a library module the probe lacks
    assert set(import_errors(tree, modules, env, timeout=60)) == FAILING
    assert [p.name for p in kept.rglob("fractions.*.pyc")]  # the library's bytecode is kept
    mirrored = str(tmp_path.resolve()).lstrip(os.sep)  # the prefix mirrors folders by their absolute paths
    kept_tree = [p for p in kept.rglob("*") if str(p.relative_to(kept)).startswith(mirrored)]
    assert kept_tree == []  # nothing of the tree, nor the empty folders above it
    assert not list(tree.rglob("__pycache__"))
    ok, stamp = tree / "pkg" / "ok.py", (tree / "pkg" / "ok.py").stat().st_mtime_ns
    ok.write_text("X = !\n")  # same size, same age: only the content tells it apart
    os.utime(ok, ns=(stamp, stamp))
    assert "pkg.ok" in import_errors(tree, modules, env, timeout=60)


@pytest.mark.skipif(offline_unavailable() is not None, reason=f"no network namespace here: {offline_unavailable()}")
def test_modules_import_without_the_hosts_network(tmp_path):
    """Importing runs the project's code (pydicom's benchmarks download test files at import): the check gives it
    no network but loopback, as the tests. The module fails its import where another interface is visible."""
    lone_loopback = (
        "import socket\nnames = sorted(name for _, name in socket.if_nameindex())\nassert names == ['lo'], names\n"
    )
    modules = write(tmp_path, {"pkg/__init__.py": "", "pkg/net.py": lone_loopback})
    assert import_errors(tmp_path, modules, HOST, timeout=60) == {}
