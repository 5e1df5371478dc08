"""A variant's two perturbations: V (the task's repository) and V' (the original with the gold patch, perturbed
with the same config and seed), whose difference is the remapped gold patch (see remap.py).

V is needed before any test; V' only for the remapped patch, i.e. for the run after the patch. So V' is a
`GoldPerturbation`: made at once in this process, or, with a core to spare, in a forked process started once V
is committed and cloned (which are mostly file creation, slowed by a V' writing its tree at the same time), that
runs beside the run before the patch and the import check; the build waits for it when it needs the patch.
The verdicts do not depend on where V' ran: `yielding_to` makes a failure met meanwhile give way to the checks
that come before it in the one-after-the-other order (V''s own crash, then V''s compile check, then the remap),
as if they had run first.
"""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from repoanchor.evals.suites.remap import Rejected
from repoanchor.perturb.results import nothing_rewritten
from repoanchor.perturb.transforms import get_transform_class
from repoanchor.perturb.tree import ApplyConfig, TreeReport, apply_tree

PR_SET_PDEATHSIG = 1


class GoldPerturbation:
    """V': made at once, or (`background`) in a forked process of its own once `start`ed; `made` and `report`
    wait for it (and start it, if nobody did)."""

    def __init__(self, with_gold: Path, config: ApplyConfig, variant_gold: Path, background: bool) -> None:
        self._inputs = (with_gold, variant_gold, config)
        self._pool: ProcessPoolExecutor | None = None
        self._future: Future | None = None
        if not background:  # its crash comes out now, before any check of V (the order the build always had)
            self._future = Future()
            self._future.set_result(apply_tree(*self._inputs))

    def start(self) -> None:
        """Begin V' in its process, unless it is begun or made. Not from two threads at once."""
        if self._future is None:
            for transform in self._inputs[2].transforms:  # imported here, once: the forked process inherits them
                get_transform_class(transform)
            self._pool = ProcessPoolExecutor(max_workers=1, initializer=_die_with_parent)
            self._future = self._pool.submit(apply_tree, *self._inputs)

    def made(self) -> TreeReport:
        """V''s report once it is made; V''s crash, if it crashed."""
        self.start()
        return self._future.result()

    def report(self) -> TreeReport:
        """`made`, and V''s cross-interpreter compile check (a Rejected)."""
        report = self.made()
        refuse_broken(report)
        return report

    def close(self) -> None:
        """End V''s process. Every path that needs V' waits for it first, so one still running here is wanted by
        nobody (an interrupt: Ctrl-C in a build of one instance): it is killed, not waited for."""
        if self._pool is None:
            return
        if self._future is not None and not self._future.done():
            kill = getattr(self._pool, "kill_workers", None)  # Python 3.14; before it, the pool's own table
            if kill is not None:
                kill()
            else:
                for worker in list((getattr(self._pool, "_processes", None) or {}).values()):
                    worker.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None


def perturb_variant(
    original: Path, with_gold: Path, config: ApplyConfig, variant: Path, variant_gold: Path, background: bool
) -> tuple[TreeReport, GoldPerturbation]:
    """V, checked (something rewritten, every file compiling), and V' begun: the original's words for generated
    names on both (the gold patch's identifiers would rename V''s files). The caller closes the GoldPerturbation."""
    report = apply_tree(original, variant, config)
    gold = GoldPerturbation(with_gold, replace(config, vocabulary_from=original), variant_gold, background)
    try:
        with yielding_to(gold.made):
            unchanged = nothing_rewritten(report.outcomes)
            if unchanged:  # a copy of the original must never pass for a perturbed task
                raise Rejected("perturb", unchanged)
            refuse_broken(report)
    except BaseException:
        gold.close()
        raise
    return report, gold


def refuse_broken(report: TreeReport) -> None:
    if report.integrity_errors:
        raise Rejected(
            "perturb", "a perturbed file fails the cross-interpreter compile check", {"files": report.integrity_errors}
        )


@contextmanager
def yielding_to(*earlier: Callable[[], object]) -> Iterator[None]:
    """Run the block; if it fails, the `earlier` checks (those the sequential order runs before it) run first,
    and the first of them to fail is raised instead."""
    try:
        yield
    except Exception:  # an interrupt waits for nothing
        for check in earlier:
            check()
        raise


def _die_with_parent() -> None:
    """A build killed mid-variant takes its perturbing process with it (Linux): left running, it would go on
    writing into the work folder that a resumed build discards and makes again."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # no prctl (not Linux): the process ends when its tree is written
        pass
