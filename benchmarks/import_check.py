"""The level-1 import check on a SymPy-sized package: forked per package vs each module imported from scratch.

SymPy 1.13.3 (with mpmath beside it, its one dependency), N of its non-test modules (every k-th, so all
subpackages are sampled; default 60) checked four ways in this one run on this machine: `fork` (today's
check, siblings on every core), `fork` one sibling at a time, a fresh interpreter per module (the reference:
its verdicts must equal fork's), and the former check, one interpreter deleting each import's modules before
the next (which SymPy crashes: reported, not compared). `--skip-fresh` leaves the slow reference out.
Usage:

    python benchmarks/import_check.py [--modules 60]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from timing import best

from repoanchor.evals.harness.env_spec import EnvSpec
from repoanchor.evals.harness.projects import fetch_sdist
from repoanchor.evals.suites.checks.level1 import import_errors, module_names
from repoanchor.perturb.source.files import python_files


def sample(modules: dict[str, str], count: int) -> dict[str, str]:
    names = sorted(modules)
    step = max(1, len(names) // count)
    return {name: modules[name] for name in names[::step][:count]}


def one_interpreter_per_module(tree: Path, modules: dict[str, str], host: EnvSpec) -> dict[str, str]:
    errors = {}
    for name, root in modules.items():
        errors.update(import_errors(tree, {name: root}, host, 3600, "isolated"))
    return errors


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=60)
    parser.add_argument("--skip-fresh", action="store_true", help="compare the fork check's job counts only")
    args = parser.parse_args(argv)
    sympy, mpmath = fetch_sdist("sympy", "1.13.3"), fetch_sdist("mpmath", "1.3.0")
    host = EnvSpec(provider="local", instance_id="bench", route="current", python=sys.executable)
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        (tree / "sympy").symlink_to(sympy / "sympy")
        (tree / "mpmath").symlink_to(mpmath / "mpmath")
        files, _ = python_files(sympy)
        modules = sample(module_names(tree, [f for f in files if f.startswith("sympy/")]), args.modules)
        verdicts = {}
        forked = best(2, lambda: verdicts.__setitem__("fork", import_errors(tree, modules, host, 3600, "fork")))
        one_job = best(2, lambda: verdicts.__setitem__("fork1", import_errors(tree, modules, host, 3600, "fork", 1)))
        assert verdicts["fork"] == verdicts["fork1"], "the fork check's verdicts depend on its job count"
        if args.skip_fresh:
            timings = {"forked_s": round(forked, 2), "forked_one_job_s": round(one_job, 2)}
            return _report(
                {"modules_checked": len(modules), **timings, "ratio_one_job_to_forked": round(one_job / forked, 2)}
            )
        fresh = best(1, lambda: verdicts.__setitem__("fresh", one_interpreter_per_module(tree, modules, host)))
        former = best(1, lambda: verdicts.__setitem__("former", import_errors(tree, modules, host, 3600, "isolated")))
    assert verdicts["fork"] == verdicts["fresh"], "fork and a fresh interpreter per module disagree"
    result = {
        "project": "sympy 1.13.3",
        "modules_checked": len(modules),
        "failing_modules": sorted(verdicts["fork"]),
        "fork_equals_fresh_interpreters": True,
        "forked_s": round(forked, 2),
        "forked_one_job_s": round(one_job, 2),
        "ratio_one_job_to_forked": round(one_job / forked, 2),
        "fresh_interpreter_per_module_s": round(fresh, 2),
        "ratio_fresh_to_forked": round(fresh / forked, 1),
        "former_check_s": round(former, 2),
        "former_check_crashed": any(e.startswith("import check crashed") for e in verdicts["former"].values()),
    }
    return _report(result)


def _report(result: dict) -> dict:
    json.dump(result, sys.stdout, indent=2)
    print()
    return result


if __name__ == "__main__":
    main()
