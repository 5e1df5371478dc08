"""The level-1 import check's script: does each changed module import, as it would from a fresh interpreter?

Run as `python -c IMPORT_SCRIPT ROOTS_JSON NAMES_JSON [fork|isolated [KEPT_PREFIX [JOBS]]]` under the instance's
interpreter (on the host or in its image); it prints `{module: error}` as the last line of its output.

`isolated` imports each module in turn and removes whatever the import added to `sys.modules` before the next:
exact, but a package whose `__init__` pulls in the whole package (SymPy: ~1.5 s) is paid once per module,
which made a 335-module SymPy variant miss its timeout. `fork` (the default) gives the same verdicts once per
package instead: importing `a.b.c` from scratch imports `a`, then `a.b`, then `a.b.c`, each in the state the
previous step left. So the script walks the tree of the names' packages depth first, every node in a process
forked from its parent's after the parent's own import: `a.b.c`'s process has exactly `a` and `a.b` imported,
as a fresh import of it would at that point. A node whose import fails falls back to `isolated` for every
name below it (the exact messages); a child that dies (a module calling os._exit, a crash) is retried the
`isolated` way in a fresh fork, then reported as crashed, and no longer takes the other modules with it.
Python 3.6 syntax (the oldest interpreter SWE-bench specs use); without os.fork it runs `isolated`.

Siblings are independent (each is forked from the same parent state), so up to JOBS of them, anywhere in the
tree, run at once: a pipe holding JOBS - 1 tokens is the job server (as make's), and a node that finds no token
runs its next child itself, waiting for it, so nothing ever blocks on a token. The verdicts do not depend on
JOBS; the time does (pvlib's four asv benchmark modules each import pvlib and pandas in their own root).

Bytecode goes to a `sys.pycache_prefix` (Python 3.8+): the checked tree gets no `__pycache__`, and a module
compiled by one child is not compiled again by each later one (a package with a light `__init__`, as pytest's
`_pytest`, has every child import most of it). Older Pythons write none. The prefix is a temporary folder, or
the folder given as a fourth argument, kept between checks: the prefix also redirects the bytecode of the
standard library and the installed packages, which a temporary one compiles afresh on every check (flask's
17 modules: 1.1 s a check, 0.5 s with the folder kept). The checked tree's part of a kept folder (the mirror of
its paths) is removed before and after: nothing of one tree is ever read for another at the same path.
"""

import json
import os


def probe_command(
    python: str, roots: list[str], names: list[str], strategy: str, kept: str, jobs: int = 0
) -> list[str]:
    """The check's command line; `jobs` forks at once (0: as many as this machine has cores)."""
    jobs = jobs or os.cpu_count() or 1
    return [python, "-c", IMPORT_SCRIPT, json.dumps(roots), json.dumps(names), strategy, kept, str(jobs)]


IMPORT_SCRIPT = r'''
import importlib, json, os, shutil, sys, tempfile, warnings
warnings.simplefilter("ignore")
ROOTS = json.loads(sys.argv[1])
sys.path[:0] = ROOTS
NAMES = json.loads(sys.argv[2])
STRATEGY = sys.argv[3] if len(sys.argv) > 3 else "fork"
KEPT = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
JOBS = max(1, int(sys.argv[5])) if len(sys.argv) > 5 else 1
TOKENS = None
if JOBS > 1 and hasattr(os, "fork"):
    TOKENS = os.pipe()
    os.write(TOKENS[1], b"t" * (JOBS - 1))
    os.set_blocking(TOKENS[0], False)
PREFIX = (KEPT or tempfile.mkdtemp(prefix="repoanchor-pyc-")) if sys.version_info >= (3, 8) else None


def forget_tree():
    # The prefix mirrors source folders by their absolute paths: the checked tree's (the working folder) and its
    # roots', as given and with links resolved.
    places = {f(p) for p in [os.getcwd()] + ROOTS for f in (os.path.abspath, os.path.realpath)}
    for place in places:
        mirror = os.path.join(PREFIX, place.lstrip(os.sep))
        shutil.rmtree(mirror, ignore_errors=True)
        parent = os.path.dirname(mirror)
        while len(parent) > len(PREFIX) and os.path.isdir(parent) and not os.listdir(parent):
            os.rmdir(parent)  # the empty folders above it, up to the prefix
            parent = os.path.dirname(parent)


if PREFIX:
    forget_tree()
    sys.pycache_prefix, sys.dont_write_bytecode = PREFIX, False


def attempt(name):
    try:
        importlib.import_module(name)
    except BaseException as exc:  # SystemExit and friends count as a failed import too
        return "{}: {}".format(type(exc).__name__, exc)[:400]
    return None


def isolated(names):
    # A failed import leaves half-initialised modules behind, and the next import would then "succeed" on
    # them: each module starts from this process's modules.
    errors, baseline = {}, set(sys.modules)
    for name in names:
        error = attempt(name)
        if error is not None:
            errors[name] = error
        for added in set(sys.modules) - baseline:
            del sys.modules[added]
    return errors


def below(prefix):
    return [name for name in NAMES if name == prefix or name.startswith(prefix + ".")]


def children(prefix):
    depth, found = (prefix.count(".") + 1) if prefix else 0, []
    for name in (below(prefix) if prefix else NAMES):
        parts = name.split(".")
        child = ".".join(parts[: depth + 1])
        if len(parts) > depth and child not in found:
            found.append(child)
    return found


def start(work):
    """work() in a forked child; returns (pid, the read end of the pipe its dict comes back through)."""
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            data = json.dumps(work()).encode()
        except BaseException:
            data = b""
        with os.fdopen(write, "wb") as sink:
            sink.write(data)
        os._exit(0)
    os.close(write)
    return pid, read


def finish(started, wait=True):
    """The child's (dict or None when it died, wait status); None when `wait` is off and it is still running
    (a child that has exited has written all its data: a larger dict would hold it in its write)."""
    pid, read = started
    if not wait:
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            return None
    with os.fdopen(read, "rb") as source:
        data = source.read()
    if wait:
        _, status = os.waitpid(pid, 0)
    return (json.loads(data.decode()) if data else None), status


def forked(work):
    return finish(start(work))


def token():
    """A free job slot, if any (never waits)."""
    if TOKENS is None:
        return False
    try:
        return os.read(TOKENS[0], 1) == b"t"
    except BlockingIOError:
        return False


def settle(child, outcome):
    """A child's verdicts: its dict, else the isolated retry's, else every name below it crashed."""
    result, status = outcome
    if result is None:
        result, status = forked(lambda: isolated(below(child)))
    if result is None:
        result = {name: "import crashed (wait status {})".format(status) for name in below(child)}
    return result


def node(prefix):
    """In a process holding exactly prefix's ancestors: import prefix, then each child package in a fork."""
    baseline = set(sys.modules)
    if prefix and attempt(prefix) is not None:
        for added in set(sys.modules) - baseline:
            del sys.modules[added]
        return isolated(below(prefix))
    errors, running = {}, []
    for child in children(prefix):
        running = reap(running, errors, wait=False)
        if token():  # a free slot: this child runs beside the next ones
            running.append((child, start(lambda child=child: node(child))))
        else:
            errors.update(settle(child, forked(lambda child=child: node(child))))
    reap(running, errors, wait=True)
    return errors


def reap(running, errors, wait):
    """Settle the running children that have finished (all of them when `wait`), giving back their slots;
    returns those still running."""
    still = []
    for child, started in running:
        outcome = finish(started, wait)
        if outcome is None:
            still.append((child, started))
            continue
        os.write(TOKENS[1], b"t")
        errors.update(settle(child, outcome))
    return still


try:
    errors = node("") if STRATEGY == "fork" and hasattr(os, "fork") else isolated(NAMES)
finally:
    if PREFIX and not KEPT:
        shutil.rmtree(PREFIX, ignore_errors=True)
    elif PREFIX:
        forget_tree()
sys.stdout.flush()
print(json.dumps(dict(sorted(errors.items()))))
'''
