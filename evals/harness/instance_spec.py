"""An instance's install spec: the row's own `install_config`, else swebench 4.1.0's for its (repo, version).

Datasets built after SWE-bench's fashion for repositories swebench has no spec for (SWE-rebench and its like)
carry one spec per row, `install_config`, in swebench's format: `python`, `packages`, `pip_packages`,
`pre_install`, `install`, `test_cmd`, `eval_commands`, `log_parser`, and where the requirements or environment
file lies (`reqs_path`, `env_yml_path`, lists of paths in the repository). Such a row builds its venv, runs its
tests and reads its log by that spec, as a SWE-bench row does by swebench's. A row may hold it as a mapping or as
JSON text; empty fields (None, as parquet stores fields a row lacks) are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from repoanchor.evals.harness.venv_build import install_spec

FIELD = "install_config"


def spec_for(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The install spec `row`'s environment and tests follow, or None when there is none."""
    own = row_spec(row)
    return own if own is not None else install_spec(row["repo"], row.get("version"))


def unusable_spec(row: Mapping[str, Any]) -> str | None:
    """Why `row` cannot be built here, judged by its spec alone (None when it can): an unusable `install_config`,
    or a spec for a project that is not Python's (SWE-bench Multilingual's rows have swebench specs with a Go, Rust
    or JavaScript toolchain and no `python`)."""
    try:
        spec = spec_for(row)
    except ValueError as error:
        return str(error).removeprefix(f"{row.get('instance_id')}: ")
    if spec is None or spec.get("python"):
        return None
    install = spec.get("install")
    return (
        f"not a Python project: swebench's spec for {row['repo']} {row.get('version')} names no Python (it installs "
        f"with {install!r}); RepoAnchor's transforms and environments are Python's"
    )


def row_spec(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """`row`'s own `install_config` as a plain dict, or None where it has none; ValueError naming the row and the
    field where it is not a usable spec."""
    config = row.get(FIELD)
    if isinstance(config, str):
        if not config.strip():
            return None
        try:
            config = json.loads(config)
        except json.JSONDecodeError as error:
            raise ValueError(f"{row.get('instance_id')}: {FIELD} is not JSON ({error})") from None
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise ValueError(f"{row.get('instance_id')}: {FIELD} is a {type(config).__name__}, not a mapping")
    spec = {key: _plain(value) for key, value in config.items() if not _empty(value)}
    if not spec:
        return None
    if "python" not in spec:
        raise ValueError(f"{row.get('instance_id')}: {FIELD} names no 'python' (the version its venv is built on)")
    if isinstance(spec["python"], (int, float)):  # 3.10 read as a number is 3.1
        raise ValueError(
            f"{row.get('instance_id')}: {FIELD}'s python is a number ({spec['python']!r}), not text: as a number 3.10 "
            "is 3.1; store it as a string"
        )
    spec["python"] = str(spec["python"])
    return spec


def _plain(value: Any) -> Any:
    """Lists for array-likes (parquet gives numpy arrays), dicts for mappings, the rest as it is."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items() if not _empty(item)}
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _empty(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, float) and value != value  # NaN: a field pandas fills for a row without it
