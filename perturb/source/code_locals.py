"""Tests that read a function's local names off its code object: there a new or renamed local is a visible change.

decorator's documentation doctest reads ``f_dec.__code__.co_varnames`` of the wrapper its ``decorator`` builds and
expects ``('args', 'kw')``; dead-string-assign gave that wrapper a local, and the doctest failed. Which function's
code a test reads cannot be told from its text (it is whatever ``decorator(_trace)(f)`` returns), so where a test
file spells ``co_varnames`` or ``co_nlocals``, or ``dis.code_info``/``dis.show_code`` (which print them), the
transforms that add or rename locals (`changes_locals`: dead-code, dead-string-assign, local-rename, for-to-while)
refuse the whole project, naming the file. Library code reading them (a signature helper over its callers'
functions) does not count: it reads the code it is given.

A frame's locals are the same names with their values: outcome's test takes the frame of its library's
``Error.unwrap`` from a traceback and asserts ``unwrap_frame.f_locals == {}``, which dead-string-assign's new local
broke. So ``f_locals``, ``inspect.getargvalues`` and ``capture_locals`` (traceback's) count too, except where the
frame is plainly the test's own (``sys._getframe().f_locals``, ``inspect.currentframe().f_locals``): test files
are never transformed. A read of one local by name (``frame.f_locals["arg"]``, ``.get("arg")``: trio's async
generator test) sees a renamed local only, so it refuses only the transforms that rename (`renames_locals`:
local-rename); a whole-namespace read anywhere in the project refuses them all. Words in comments do not count,
nor ``f_locals`` but as an attribute (loguru's fake frames name it in a namedtuple's fields).
"""

from __future__ import annotations

import re

READS_LOCALS = re.compile(
    rb"\b(co_varnames|co_nlocals|(?<=\.)f_locals|getargvalues|capture_locals|dis\.code_info|dis\.show_code"
    rb"|from dis import [^\n]*\b(?:code_info|show_code))\b"
)
_OWN_FRAME = re.compile(rb"(?:\b_getframe\(\s*0?\s*\)|\bcurrentframe\(\s*\))\s*\.\s*$")
"""What, right before ``f_locals``, makes the frame the test's own."""
_BY_NAME = re.compile(rb"\s*(?:\[|\.get\()")
"""What, right after ``f_locals``, reads one local by its name."""
BY_NAME = " by name"
"""The end of `locals_read`'s answer where every read it found takes one local by its name."""
_MAY_READ_LOCALS = (b"co_", b"code_info", b"show_code", b"f_locals", b"getargvalues", b"capture_locals")
"""Bytes every match of `READS_LOCALS` holds, looked for first: most test files hold none, and finding them is
several times faster than the pattern's search."""


def locals_read(tests: dict[str, bytes]) -> str | None:
    """Which test file (`files.read_test_files`) first reads a code object's or frame's locals, and how: `<file>
    reads <name>`, a whole-namespace read before any by name (those end in `BY_NAME`)."""
    by_name = None
    for rel, data in tests.items():
        if not any(part in data for part in _MAY_READ_LOCALS):
            continue
        for match in READS_LOCALS.finditer(data):
            if _commented(data, match.start()) or _own_frame(data, match):
                continue
            if match.group(1) != b"f_locals" or not _BY_NAME.match(data, match.end()):
                return f"{rel} reads {match.group(1).decode()}"
            by_name = by_name or f"{rel} reads f_locals{BY_NAME}"
    return by_name


def _commented(data: bytes, at: int) -> bool:
    return b"#" in data[data.rfind(b"\n", 0, at) + 1 : at]


def _own_frame(data: bytes, match: re.Match) -> bool:
    return match.group(1) == b"f_locals" and bool(_OWN_FRAME.search(data, max(0, match.start() - 40), match.start()))


def locals_refusal(transform: object, read: str | None) -> str | None:
    """Why `transform` cannot run on a project whose tests read locals (`read`, from `locals_read`), or None."""
    if read is None or not getattr(transform, "changes_locals", False):
        return None
    if read.endswith(BY_NAME) and not getattr(transform, "renames_locals", False):
        return None  # a local added beside the ones read by name changes nothing read
    return f"code-locals-read: {read}; a local this transform adds or renames would show there"
