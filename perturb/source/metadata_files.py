"""Reading a project's own metadata files (pyproject.toml, setup.cfg, setup.py, PKG-INFO) leniently: a file that
is missing, undecodable or malformed answers nothing rather than failing the transform."""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def pyproject(root: Path) -> dict:
    """pyproject.toml's tables; {} when there is none or it does not parse."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def setup_cfg(root: Path, section: str, option: str) -> str | None:
    """An option of setup.cfg, if the file has it."""
    path = root / "setup.cfg"
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path)
        return parser.get(section, option, fallback=None)
    except configparser.Error:
        return None


def first_match(path: Path, pattern: re.Pattern) -> str | None:
    """The first group of `pattern`'s first match in a text file (setup.py, PKG-INFO), if any."""
    if not path.is_file():
        return None
    match = pattern.search(path.read_text(errors="replace"))
    return match.group(1) if match else None
