"""Where an instance's tests run: a local clone plus a virtualenv, or the dataset's SWE-bench image.

`local`: the repository comes from `--repo PATH` or `--repo-cache DIR/owner__name`, is cloned into a work
folder at `base_commit`, and gets an interpreter by one of three routes, recorded in `EnvSpec.route`:
- `current`: rows carrying `repoanchor_test_cmd` (the embedded fixture: stdlib + pytest) and rows with no
  install spec run under this interpreter, whose site already has pytest; no venv to build or cache.
  `repoanchor_install` (optional) is such a row's install step, run in the checkout before every test
  run and Extend probe, like a spec's `install`: e.g. a script that generates the package's version
  file. It runs with this interpreter first on PATH, so it must not install into it;
- `spec`: SWE-bench repos/versions known to swebench 4.1.0 get a cached venv of dependencies
  (`venv_build`); like SWE-bench's eval script, each test run re-runs the spec's tree-editing
  `pre_install` steps and, after the patches, the project's own `install`, so a non-editable install
  (`pip install .`, `setup.py install`) tests the patched code.
`image`: an environment image built by `repoanchor images build` (found by its labels, or given), the
checkout copied into it for each run (`container_run`); or a SWE-bench instance image (the dataset's
`image` column, or one given) with the repository already at /testbed (`instance_image`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from repoanchor.evals.harness import container_run, venv_build
from repoanchor.evals.harness.dependencies.editable import editable_install
from repoanchor.evals.harness.dependencies.release_date import pip_version, release_date
from repoanchor.evals.harness.env_spec import EnvSpec
from repoanchor.evals.harness.instance_spec import spec_for
from repoanchor.scaffolds.records import InfraError


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InfraError("environment_setup", f"git {' '.join(args)} in {cwd}: {proc.stderr.strip()}")
    return proc.stdout


def cached_clone(repo_cache: Path, repo_name: str) -> Path:
    """Where a repository cache holds `owner/name`'s clone: `repo_cache/owner__name` (SWE-bench image naming)."""
    return Path(repo_cache) / repo_name.replace("/", "__")


def source_repo(row: dict[str, Any], repo: Path | None = None, repo_cache: Path | None = None) -> Path:
    """The local repository for `row`: `repo` itself, or `repo_cache/owner__name` (SWE-bench image naming)."""
    if repo is None and repo_cache is not None:
        repo = cached_clone(Path(repo_cache).resolve(), row["repo"])
    if repo is None or not (Path(repo) / ".git").exists():
        raise InfraError("environment_setup", f"{row['instance_id']}: no git repository at {repo}")
    return Path(repo)


PARALLEL_CHECKOUT = ("-c", "checkout.workers=0")
"""git writes a checkout's files with a worker per core (git >= 2.32; older versions ignore the setting): file
creation is mostly kernel time, and a fresh clone of flask's perturbed variant (800 files) took 0.38 s on one
worker, 0.24 s on two (ext4, 2 cores). The files are the same; only the order they are written in changes."""


def checkout(source: Path, base_commit: str, workdir: Path) -> Path:
    """A clone of `source` at `base_commit` (detached) in `workdir`, which must not exist yet."""
    if Path(workdir).exists():
        raise InfraError("environment_setup", f"{workdir} already exists")
    _git(Path(workdir).parent, "clone", "--quiet", "--no-checkout", str(Path(source).resolve()), str(workdir))
    _git(workdir, *PARALLEL_CHECKOUT, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", base_commit)
    return Path(workdir)


def reset_checkout(workdir: Path, base_commit: str) -> None:
    """Back to `base_commit` with no changes; ignored files (build outputs, egg-info) are kept."""
    _git(workdir, "reset", "--quiet", "--hard", base_commit)
    _git(workdir, "clean", "--quiet", "-fd")


def local_env(row: dict[str, Any], workdir: Path, cache_dir: Path) -> EnvSpec:
    """The `local` environment for `row` in the prepared checkout `workdir`; builds the venv when needed."""
    spec = None if row.get("repoanchor_test_cmd") else spec_for(row)
    if spec is None:
        install = row.get("repoanchor_install")  # the checkout's own preparation, as a spec's `install` is
        return EnvSpec(
            provider="local", instance_id=row["instance_id"], route="current", python=sys.executable, install=install
        )
    date = release_date(row, workdir, spec)
    setup_commit = row.get("environment_setup_commit")
    venv, record = venv_build.build_venv(row["repo"], str(row["version"]), spec, workdir, cache_dir, date, setup_commit)
    tree_steps, system_steps = venv_build.split_pre_install(spec)
    return EnvSpec(
        provider="local",
        instance_id=row["instance_id"],
        route="spec",
        python=str(venv / "bin" / "python"),
        venv=str(venv),
        pre_install=tree_steps,
        install=editable_install(spec.get("install"), workdir, pip_version(venv)),
        dependencies_as_of=date.when,
        skipped=[*record["skipped"], *(f"system step: {step}" for step in system_steps)],
    )


def image_env(row: dict[str, Any], image: str | None = None) -> EnvSpec:
    name = image or row.get("image")
    if not name:
        raise InfraError("environment_setup", f"{row['instance_id']}: no `image` column and no image given")
    return EnvSpec(provider="image", instance_id=row["instance_id"], route="image", image=name)


def prepare(
    row: dict[str, Any],
    provider: str,
    workdir: Path,
    *,
    repo: Path | None = None,
    repo_cache: Path | None = None,
    cache_dir: Path | None = None,
    image: str | None = None,
    own_trees: bool = False,
) -> EnvSpec:
    """Make `row`'s environment: for `local`, clone into `workdir` and build/reuse the venv; for `image`, clone
    into `workdir` too when the image is an environment image (its tree is copied in for each run).

    `own_trees`: the tests will run on trees of ours (a suite's variants), so a SWE-bench instance image named
    by the row, whose /testbed holds the original, cannot serve: the environment image of (repo, version) does."""
    if provider not in ("local", "image"):
        raise ValueError(f"unknown environment provider {provider!r}; expected 'local' or 'image'")
    named = image or row.get("image")
    if provider == "image" and named and not container_run.is_env_image(named):
        if not own_trees:
            return image_env(row, named)
        named = None  # found by its labels instead
    checkout(source_repo(row, repo, repo_cache), row["base_commit"], workdir)
    if provider == "image":
        return container_run.env_image_spec(row, named)
    cache = Path(cache_dir) if cache_dir else Path.home() / ".cache" / "repoanchor" / "venvs"
    return local_env(row, workdir, cache)
