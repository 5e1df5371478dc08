"""Code formatters run from the shell: they rewrite files on disk (an edit) unless asked only to check or to show
their changes, which writes nothing (other), or, for those that print by default, unless told to work in place."""

from __future__ import annotations

REWRITE_BY_DEFAULT = {"black", "isort", "autoflake8", "pyupgrade", "add-trailing-comma"}
"""Rewrite the files they are given unless `--check`/`--diff` (or isort's `--check-only`) says otherwise."""
PRINT_BY_DEFAULT = {"autopep8", "yapf", "autoflake", "docformatter"}
"""Print the formatted code unless `-i`/`--in-place` is given."""
_ONLY_LOOK = {"--check", "--check-only", "--diff", "-c", "--show-diff"}


def formatter_category(name: str, args: list[str]) -> str | None:
    """ "edit" where the formatter writes files, "other" where it only checks or prints, None for anything else.
    `ruff format` and `ruff check --fix` write too."""
    if name == "ruff":
        writes = (args[:1] == ["format"] and not _ONLY_LOOK & set(args)) or "--fix" in args
        return "edit" if writes else None  # `ruff check` alone is a linter, left to the rest of the rules
    if name in REWRITE_BY_DEFAULT:
        return "other" if _ONLY_LOOK & set(args) else "edit"
    if name in PRINT_BY_DEFAULT:
        return "edit" if {"-i", "--in-place"} & set(args) else "other"
    return None
