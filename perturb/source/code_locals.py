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
broke. So ``inspect.getargvalues``, ``capture_locals`` (traceback's) and ``.f_locals`` compared or counted whole
(``== {}``, ``len(...)``, ``.keys()``) count too, except where the frame is plainly the test's own
(``sys._getframe().f_locals``, ``inspect.currentframe().f_locals``): test files are never transformed. A read of one
local by name (``frame.f_locals["arg"]``, ``.get("arg")``, ``"arg" in``: trio's async generator test, Django's
trace function reading ``f_locals['self']``) sees a renamed local only: local-rename leaves alone the locals so named
(`locals_named`; every local where the name is not a literal). Other uses do not count:
Django's debug-page tests list ``tb_frame.f_locals.items()`` and look for their own views' variables, sphinx's
inspect tests pass ``types.FrameType.f_locals`` (either would have cost every Django or sphinx variant four
transforms), loguru's fake frames name it among a namedtuple's fields; nor do words in comments.
"""

from __future__ import annotations

import re

READS_LOCALS = re.compile(
    rb"\b(co_varnames|co_nlocals|(?<=\.)f_locals|getargvalues|capture_locals|dis\.code_info|dis\.show_code"
    rb"|from dis import [^\n]*\b(?:code_info|show_code))\b"
)
_OWN_FRAME = re.compile(rb"(?:\b_getframe\(\s*0?\s*\)|\bcurrentframe\(\s*\))\s*\.\s*$")
"""What, right before ``f_locals``, makes the frame the test's own."""
_FRAME = rb"[\w.\[\]()'\"]*\.\s*$"
"""The frame expression ending right before ``f_locals`` (``exc.__traceback__.tb_next.tb_frame.``)."""
_WHOLE_AFTER = re.compile(rb"\s*(?:[=!]=|\.keys\(\))")
_WHOLE_BEFORE = re.compile(rb"(?:[=!]=\s*|\b(?:len|set|sorted|list|tuple|dict)\(\s*)" + _FRAME)
"""What around ``f_locals`` compares or counts the whole namespace (``frame.f_locals == {}``, ``len(...)``)."""
_NAME_AFTER = re.compile(rb"\s*(?:\[|\.get\()\s*(?:(['\"])(\w+)\1)?")
_NAME_BEFORE = re.compile(rb"(?:(['\"])(\w+)\1\s+)?\bin\s+" + _FRAME)
"""What around ``f_locals`` reads one local by its name (``f_locals["arg"]``, ``"arg" in frame.f_locals``); the
name, where a literal gives it, is the match's second group."""
ANY_LOCAL = "*"
"""`locals_named`'s key where a test reads a frame local by a name no literal gives."""
_WHOLE = "<whole namespace>"  # not an identifier: no local read by name is called so
_MAY_READ_LOCALS = (b"co_", b"code_info", b"show_code", b"f_locals", b"getargvalues", b"capture_locals")
"""Bytes every match of `READS_LOCALS` holds, looked for first: most test files hold none, and finding them is
several times faster than the pattern's search."""


def locals_read(tests: dict[str, bytes]) -> tuple[str | None, dict[str, str]]:
    """Over the test files (`files.read_test_files`): which first reads a code object's or frame's whole namespace,
    and how (`<file> reads <name>`), and {local name (or `ANY_LOCAL`): `<file> reads f_locals[...]`} of the frame
    locals read by name."""
    named: dict[str, str] = {}
    for rel, data in tests.items():
        if not any(part in data for part in _MAY_READ_LOCALS):
            continue
        for match in READS_LOCALS.finditer(data):
            if _commented(data, match.start()):
                continue
            if match.group(1) != b"f_locals":
                return f"{rel} reads {match.group(1).decode()}", named
            how = _frame_read(data, match)
            if how == _WHOLE:
                return f"{rel} reads f_locals", named
            if how is not None:
                named.setdefault(how, f"{rel} reads f_locals[{how!r}]" if how != ANY_LOCAL else f"{rel} reads f_locals")
    return None, named


def _commented(data: bytes, at: int) -> bool:
    return b"#" in data[data.rfind(b"\n", 0, at) + 1 : at]


def _frame_read(data: bytes, match: re.Match) -> str | None:
    """How ``.f_locals`` at `match` is read: `_WHOLE` (compared, counted, its keys), the one local's name (or
    `ANY_LOCAL`), or None (the test's own frame; a display of its items, Django's debug-page filter;
    ``types.FrameType.f_locals``)."""
    before = max(0, match.start() - 120)
    if _OWN_FRAME.search(data, before, match.start()):
        return None
    if _WHOLE_AFTER.match(data, match.end()) or _WHOLE_BEFORE.search(data, before, match.start()):
        return _WHOLE
    if found := _NAME_AFTER.match(data, match.end()) or _NAME_BEFORE.search(data, before, match.start()):
        return found.group(2).decode() if found.group(2) else ANY_LOCAL
    return None


def locals_refusal(transform: object, read: str | None) -> str | None:
    """Why `transform` cannot run on a project whose tests read a whole namespace of locals (`read`), or None."""
    if read is None or not getattr(transform, "changes_locals", False):
        return None
    return f"code-locals-read: {read}; a local this transform adds or renames would show there"
