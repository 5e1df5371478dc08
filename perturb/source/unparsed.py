"""The project's files the running Python cannot parse, where the project declares a newer one.

Dead-method and the three RepoMirage structural passes stay equivalent only by reading every file of the tree with
this Python's `ast`: the class index and the classes whose members some code lists, the modules read by path as
text, the folders listed at run time. A file of newer syntax (3.12's PEP 695 type parameters, PEP 701 f-strings)
does not parse here, and read as empty it would hide a listing or a read. So where the project declares a Python
newer than this one and some file does not parse here, those passes refuse, naming the file
(`refusal`); the other SPTs need no such reading and go on (their outputs are compiled under the project's Python).
A project declaring no newer Python reads as before: a file that parses under no Python it supports cannot run,
so it hides nothing.
"""

from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path

CURRENT = sys.version_info[:2]

READERS = frozenset({"dead-method", "runtime-target-masking", "proxy-imports", "constant-externalization"})
"""The passes whose equivalence rests on reading every file of the tree."""


def unparsed_here(root: Path, min_python: tuple[int, int], every: list[str]) -> dict[str, str]:
    """{rel: why} of the tree's Python files (`every`: tests and build scripts included) this Python cannot parse,
    where `min_python`, the project's oldest, is newer than this Python; {} otherwise, without reading a file."""
    if min_python <= CURRENT:
        return {}
    found = {}
    for rel in every:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse((root / rel).read_bytes())
        except (SyntaxError, ValueError) as exc:
            found[rel] = f"{type(exc).__name__}: {getattr(exc, 'msg', exc)} (line {getattr(exc, 'lineno', '?')})"
        except RecursionError:
            found[rel] = "RecursionError: nested too deeply for this Python's parser"
    return found


def refusal(transform: str, unparsed: dict[str, str], min_python: tuple[int, int]) -> str | None:
    """Why `transform` cannot run on a project with `unparsed` files, or None where it can."""
    if transform not in READERS or not unparsed:
        return None
    first = min(unparsed)
    needed = f"{min_python[0]}.{min_python[1]}"
    return (
        f"newer syntax: Python {CURRENT[0]}.{CURRENT[1]}, running RepoAnchor, cannot parse {len(unparsed)} of the "
        f"project's files ({first}: {unparsed[first]}), which {transform} must read to stay equivalent; run "
        f"RepoAnchor under Python {needed} or later for it"
    )
