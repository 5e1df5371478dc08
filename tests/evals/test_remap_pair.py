"""V' in a process of its own (a build's GoldPerturbation): V and V' are byte for byte, report for report, the pair
perturbed one after the other in one process (the RepoMirage transforms, whose draws run across the whole tree)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_suite import fixture_dataset

from repoanchor.evals.suites.pair import perturb_variant
from repoanchor.perturb.tree import ApplyConfig

MIRAGE = ["proxy-imports", "runtime-target-masking", "constant-externalization"]


def both_reports(original: Path, with_gold: Path, config: ApplyConfig, out: Path, background: bool):
    """V and V' as a build makes them (V' started at once here), both checked."""
    report, gold = perturb_variant(original, with_gold, config, out / "v", out / "v-gold", background)
    gold.start()
    try:
        return report, gold.report()
    finally:
        gold.close()


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("seed", [0, 1])
def test_the_pair_on_two_processes_is_the_pair_one_after_the_other(seed: int, tmp_path_factory, tmp_path: Path):
    cache, _ = fixture_dataset(tmp_path_factory)
    original = tmp_path / "original"
    shutil.copytree(cache / "ledger", original, ignore=shutil.ignore_patterns(".git"))
    with_gold = tmp_path / "with-gold"
    shutil.copytree(original, with_gold)
    first = next(p for p in sorted(with_gold.rglob("*.py")) if "tests" not in p.parts and p.stat().st_size > 200)
    first.write_text(first.read_text() + "\n\nADDED_BY_THE_FIX = 2\n")
    config = ApplyConfig(MIRAGE, fraction=0.7, seed=seed, workers=1, check_interpreters=False)
    runs = {}
    for processes in (1, 2):
        out = tmp_path / f"p{processes}"
        reports = both_reports(original, with_gold, config, out, background=processes == 2)
        runs[processes] = (reports, tree_bytes(out / "v"), tree_bytes(out / "v-gold"))
    (alone, v1, g1), (together, v2, g2) = runs[1], runs[2]
    assert v1 == v2
    assert g1 == g2
    assert together == alone
    assert v1 != tree_bytes(original)  # the trees were perturbed
    assert g1 != v1  # and the gold tree carries the fix


def _parent_death_signal(_: int) -> int:
    import ctypes

    from repoanchor.evals.suites.pair import _die_with_parent

    _die_with_parent()
    libc, found = ctypes.CDLL(None, use_errno=True), ctypes.c_int(-1)
    libc.prctl(2, ctypes.byref(found))  # PR_GET_PDEATHSIG
    return found.value


def test_a_perturbing_process_is_killed_with_its_build():
    import signal
    import sys
    from concurrent.futures import ProcessPoolExecutor

    if not sys.platform.startswith("linux"):
        pytest.skip("prctl is Linux's")
    with ProcessPoolExecutor(1) as pool:
        assert pool.submit(_parent_death_signal, 0).result() == signal.SIGKILL


def test_the_pairs_processes_inherit_the_transforms_instead_of_importing_them(tmp_path: Path):
    """Imported by the parent (once a build), not by each pair's two forked processes (0.1-0.3 s a pair on flask)."""
    import subprocess
    import sys

    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("from .core import run\n")
    (tmp_path / "src" / "pkg" / "core.py").write_text("LIMIT = 3\n\n\ndef run(x):\n    return x + LIMIT\n")
    shutil.copytree(tmp_path / "src", tmp_path / "gold")
    code = f"""
import sys
from pathlib import Path
from repoanchor.evals.suites.pair import perturb_variant
from repoanchor.perturb.tree import ApplyConfig
t = Path(sys.argv[1])
config = ApplyConfig({MIRAGE!r}, seed=0, check_interpreters=False)
report, gold = perturb_variant(t / "src", t / "gold", config, t / "v", t / "vg", background=True)
gold.report()
gold.close()
print(*sorted(m for m in sys.modules if m.startswith("repoanchor.perturb.mirage.") and m.endswith(".transform")))
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert len(out.stdout.split()) == len(MIRAGE)


class Refused(Exception):
    pass


def _refuse(label: str):
    def check():
        raise Refused(label)

    return check


@pytest.mark.parametrize(
    ("earlier", "expected"),
    [
        ((), "the block's own"),  # nothing comes before it: its own failure
        ((lambda: None,), "the block's own"),  # what comes before passes
        ((lambda: None, _refuse("V' crashed")), "V' crashed"),
        ((_refuse("V' fails to compile"), _refuse("the remap is empty")), "V' fails to compile"),
    ],
)
def test_a_failure_met_while_v_prime_ran_gives_way_to_the_checks_that_come_before_it(earlier, expected):
    from repoanchor.evals.suites.pair import yielding_to

    with pytest.raises(Refused) as raised, yielding_to(*earlier):
        raise Refused("the block's own")
    assert str(raised.value) == expected


def test_the_checks_before_a_block_run_only_when_it_fails():
    from repoanchor.evals.suites.pair import yielding_to

    ran = []
    with yielding_to(lambda: ran.append("V'")):
        pass
    assert ran == []


def test_closing_a_v_prime_nobody_waits_for_kills_it_instead_of_waiting(tmp_path: Path):
    """An interrupted build closes its V' while it still runs: the process is killed, not awaited (a SymPy V' takes
    minutes). The transform here stalls for two minutes; the close returns long before."""
    import multiprocessing
    import time

    from repoanchor.evals.suites.pair import GoldPerturbation

    (tmp_path / "gold" / "pkg").mkdir(parents=True)
    (tmp_path / "gold" / "pkg" / "m.py").write_text("a = 1\n")
    config = ApplyConfig(["tests.perturb.broken_transforms.Stalls"], fraction=1.0, check_interpreters=False)
    gold = GoldPerturbation(tmp_path / "gold", config, tmp_path / "v-gold", background=True)
    gold.start()
    (worker,) = multiprocessing.active_children()
    started = time.monotonic()
    gold.close()
    assert time.monotonic() - started < 60  # not the transform's 120 s
    worker.join(timeout=60)
    assert not worker.is_alive()
