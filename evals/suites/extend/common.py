"""Helpers every family shares: module names, the probe, the project's tests, exact JSON equality."""

from __future__ import annotations

import fcntl
import json
import math
import os
import shlex
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from repoanchor.evals.suites.extend import in_image
from repoanchor.evals.suites.extend.setup_steps import setup_script
from repoanchor.perturb.atomic import write_atomic
from repoanchor.perturb.source.files import copy_source_tree
from repoanchor.perturb.validation.isolation import offline_command

PROBE = Path(__file__).with_name("probe.py")


class ExtendError(RuntimeError):
    """A task could not be built or checked for a reason outside the agent's control."""


def module_of(rel: str, root: Path) -> tuple[str, str]:
    """(dotted module name, import root relative to `root`) of the file `rel`: the import root is
    the first folder above the file's chain of packages (folders holding ``__init__.py``)."""
    parts = list(PurePosixPath(rel).parts)
    name = [parts[-1][: -len(".py")]] if parts[-1] != "__init__.py" else []
    folder = parts[:-1]
    while folder and (root.joinpath(*folder) / "__init__.py").is_file():
        name.insert(0, folder.pop())
    return ".".join(name), "/".join(folder)


def package_of(rel: str, root: Path) -> str:
    name, _ = module_of(rel, root)
    return name if rel.endswith("__init__.py") else name.rpartition(".")[0]


def copy_tree(src: Path, dst: Path) -> None:
    copy_source_tree(src, dst)


def clone(repo: Path, dst: Path) -> None:
    """A disposable checkout of `repo` (its one commit) at `dst`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    proc = subprocess.run(["git", "clone", "-q", "--local", str(repo), str(dst)], env=env, capture_output=True)
    if proc.returncode != 0:
        raise ExtendError(f"git clone {repo} failed: {proc.stderr.decode('utf-8', 'replace')[-800:]}")


def run_probe(settings, worktree: Path, spec: dict, roots: set[str]) -> dict:
    """Run probe.py with the variant's Python in `worktree`; its findings, or ExtendError.

    `settings` (a FamiliesConfig or a ValidatorSpec) gives `python`, `probe_timeout_s` and
    `test_env` (variables the project needs to import, e.g. a settings module); with `image`, the probe
    runs in a container of that environment image (`in_image`)."""
    worktree = Path(worktree).resolve()
    if settings.image:
        try:
            return in_image.probe(worktree, spec, roots, settings, PROBE)
        except in_image.InImageError as exc:
            raise ExtendError(str(exc)) from exc
    with installed(worktree, settings):
        return _probe(worktree, spec, roots, settings)


def _probe(worktree: Path, spec: dict, roots: set[str], settings) -> dict:
    python, timeout = settings.python, settings.probe_timeout_s
    spec = {
        **spec,
        "root": str(worktree),
        "sys_path": [str(worktree / r) if r else str(worktree) for r in sorted(roots)],
    }
    with tempfile.TemporaryDirectory(prefix="repoanchor-probe-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec))
        # The probe imports the project's modules, so it runs their code: without the host's network, as the tests.
        cmd = offline_command(shlex.join([python, "-I", "-B", str(PROBE), str(spec_path), str(out_path)]))[0]
        try:
            env = {**os.environ, **settings.test_env}
            proc = subprocess.run(
                cmd, cwd=worktree, env=env, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired as exc:
            raise ExtendError(f"probe timed out after {timeout:g}s") from exc
        if proc.returncode != 0 or not out_path.is_file():
            tail = proc.stderr.decode("utf-8", "replace")[-1500:]
            raise ExtendError(f"probe crashed (exit {proc.returncode}): {tail}")
        return json.loads(out_path.read_text())


def python_first_on_path(python: str) -> str:
    """This process's PATH with `python`'s folder first: the install step and the tests run `python`, `pip` and
    the project's scripts (Django's `./tests/runtests.py` and SymPy's `bin/test` start `python`) from it."""
    return f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}"


@contextmanager
def installed(worktree: Path, settings) -> Iterator[None]:
    """The instance's setup (`setup_steps.setup_script`: its pre-install steps once per tree, its install step)
    run in `worktree`, holding `settings.setup_lock` until the block ends; ExtendError if it fails. Nothing to
    do without a setup command."""
    script = setup_script(settings)
    if not script:
        yield
        return
    lock = Path(settings.setup_lock) if settings.setup_lock else None
    with _locked(lock):
        env = {**os.environ, **settings.test_env, "PATH": python_first_on_path(settings.python)}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        try:
            proc = subprocess.run(
                ["bash", "-c", script], cwd=worktree, env=env, capture_output=True,
                timeout=settings.test_timeout_s, stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        except subprocess.TimeoutExpired as exc:
            raise ExtendError(f"the instance's install step timed out after {settings.test_timeout_s:g}s") from exc
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).decode("utf-8", "replace")[-1200:]
            raise ExtendError(f"the instance's install step failed (exit {proc.returncode}): {tail}")
        yield


@contextmanager
def _locked(path: Path | None) -> Iterator[None]:
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def exact_difference(expected: object, actual: object, where: str = "$") -> str | None:
    """Where two JSON values differ, with types exact (1, 1.0 and true all differ); None if equal."""
    if type(expected) is not type(actual):
        return f"{where}: expected {type(expected).__name__} {expected!r}, got {type(actual).__name__} {actual!r}"
    if isinstance(expected, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                return f"{where}: key {key!r} is missing"
            if key not in expected:
                return f"{where}: unexpected key {key!r}"
            found = exact_difference(expected[key], actual[key], f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} items, got {len(actual)}"
        return next(
            (
                d
                for i, (e, a) in enumerate(zip(expected, actual, strict=False))
                if (d := exact_difference(e, a, f"{where}[{i}]"))
            ),
            None,
        )
    if isinstance(expected, float):
        same = repr(expected) == repr(actual) or (math.isnan(expected) and math.isnan(actual))
        return None if same else f"{where}: expected {expected!r}, got {actual!r}"
    return None if expected == actual else f"{where}: expected {expected!r}, got {actual!r}"


def write_json(path: Path, data: object) -> None:
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
