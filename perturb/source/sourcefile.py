"""Decide whether a file's bytes are something we may transform, and say why not."""

from __future__ import annotations

import ast
import io
import tokenize
import warnings

MAX_FILE_BYTES = 2 * 1024 * 1024


class SourceError(ValueError):
    """A file we refuse to transform; the message is the recorded skip reason."""


def decode_source(source: bytes, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The file's text under its declared encoding (PEP 263), or SourceError with the reason."""
    if not source.strip():
        raise SourceError("empty: nothing to transform")
    if len(source) > max_bytes:
        raise SourceError(f"too large: {len(source)} bytes > limit {max_bytes}")
    if b"\x00" in source:
        raise SourceError("binary: contains NUL bytes")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise SourceError(f"undecodable: {type(exc).__name__}: {exc}") from exc


def parsed_quietly(source: bytes | str) -> ast.Module | None:
    """`source` parsed by `ast`, or None where this Python cannot parse it (or it nests past the recursion limit).
    The warnings a parse gives (an invalid escape) are not shown: the readers that call this only look at the tree."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None


def called_name(call: ast.Call) -> str | None:
    """The name a call calls: `f` of `f(...)` and of `a.b.f(...)`; None for anything else."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
