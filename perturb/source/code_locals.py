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
are never transformed.
"""

from __future__ import annotations

import re

READS_LOCALS = re.compile(
    rb"\b(co_varnames|co_nlocals|f_locals|getargvalues|capture_locals|dis\.code_info|dis\.show_code"
    rb"|from dis import [^\n]*\b(?:code_info|show_code))\b"
)
_OWN_FRAME = re.compile(rb"(?:\b_getframe\(\s*0?\s*\)|\bcurrentframe\(\s*\))\s*\.\s*$")
"""What, right before ``f_locals``, makes the frame the test's own."""
_MAY_READ_LOCALS = (b"co_", b"code_info", b"show_code", b"f_locals", b"getargvalues", b"capture_locals")
"""Bytes every match of `READS_LOCALS` holds, looked for first: most test files hold none, and finding them is
several times faster than the pattern's search."""


def locals_read(tests: dict[str, bytes]) -> str | None:
    """Which test file (`files.read_test_files`) first reads a code object's locals, and how: `<file> reads <name>`."""
    for rel, data in tests.items():
        if any(part in data for part in _MAY_READ_LOCALS) and (match := _first_read(data)):
            return f"{rel} reads {match.group(1).decode()}"
    return None


def _first_read(data: bytes) -> re.Match | None:
    for match in READS_LOCALS.finditer(data):
        if match.group(1) != b"f_locals" or not _OWN_FRAME.search(data, max(0, match.start() - 40), match.start()):
            return match
    return None


def locals_refusal(transform: object, read: str | None) -> str | None:
    """Why `transform` cannot run on a project whose tests read code objects' locals (`read`), or None."""
    if read is None or not getattr(transform, "changes_locals", False):
        return None
    return f"code-locals-read: {read}; a local this transform adds or renames would show there"
