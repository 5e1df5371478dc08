"""Words a test expects not to see in output: the names transforms make hold none of them.

pytest's ``test_raises_with_invalid_regex`` runs pytest on a failing test and asserts ``no_fnmatch_line("*line*")``
on its report, which shows the source of pytest's own ``RaisesContext.__init__``. The all-14 stack had bound
``fresh_line_line86`` there (dead-string-assign's local, a renamed one beside it), and the report matched. So the
lowercase words of three letters or more in what the tests' negative checks look for are read: the patterns of
pytester's ``no_fnmatch_line`` and ``no_re_match_line``, and a string literal tested with ``not in``
(``assert "line" not in out``). `naming.fresh_name` then draws from the vocabulary's words that hold none of them
(a word is a run of lowercase letters, and generated names join words with ``_`` and end in digits, so a name holds
an avoided word only if one of its vocabulary words does).

Read with patterns, not a parse: ``not in`` is in nearly every test file, and parsing all of sympy's 679 would cost
seconds a variant. A literal the patterns misread only avoids a few more words.
"""

from __future__ import annotations

import re

_NEGATED_MATCH = re.compile(rb"""\bno_(?:fn|re_)match_line\(\s*[rRbBuUfF]{0,2}(?P<q>['"])(?P<text>[^'"\n]*)(?P=q)""")
_NOT_IN = re.compile(rb"""(?P<q>['"])(?P<text>[^'"\n]*)(?P=q)\s+not\s+in\b""")
_HINTS = (b"match_line", b"not in")
"""Bytes a file with a negative check holds: the others are not searched."""
WORD = re.compile(rb"[a-z]{3,}")
"""A word of the vocabulary could hold: shorter runs (``*a*``) would forbid most of it."""


def absent_words(tests: dict[str, bytes]) -> frozenset[str]:
    """The words that the test files (`files.read_test_files`) expect absent from some output."""
    found: set[bytes] = set()
    for data in tests.values():
        if not any(hint in data for hint in _HINTS):
            continue
        for pattern in (_NEGATED_MATCH, _NOT_IN):
            for match in pattern.finditer(data):
                found.update(WORD.findall(match.group("text")))
    return frozenset(word.decode("ascii") for word in found)
