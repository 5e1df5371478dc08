"""Deterministic keywords from an issue's text, for when no model is configured or the call fails.

Method names: identifiers the issue shows as code. An occurrence scores by how code-like its
context is: a call `name(`, a traceback frame `in name`, a backtick or fenced code span, a
snake_case / camelCase / dotted shape. Plain prose words score nothing, so English never
becomes a keyword. String literals: text in single or double quotes (an apostrophe inside a
word is not a quote), minus paths, URLs and version numbers. Both lists are ranked by total
score (literals: by count), then by first position, then by text: the same issue always gives
the same keywords, in the same order.
"""

from __future__ import annotations

import builtins
import keyword
import re

URL = re.compile(r"\w+://\S+")
FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
BACKTICK = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
FRAME = re.compile(r"^\s*File \"[^\"]*\", line \d+, in ([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)
QUOTED = re.compile(r"""(?<![\w'"\\])(['"])([^'"\n]{2,80}?)\1(?![\w'"])""")
VERSION = re.compile(r"v?\d+(?:[.\-]\d+)+\w*")

CALL_SCORE, FRAME_SCORE, CODE_SCORE, SHAPE_SCORE = 3, 3, 2, 1
PATH_CHARS = frozenset("/\\-")

NOISE = frozenset(
    """
    self cls args kwargs foo bar baz qux spam eggs ham obj tmp val var func fn arg param params
    test tests testing example examples python pip main init value values data result results
    error errors warning exception traceback file line lines code issue bug fix patch version
    the and for with this that from not are was were but you your have has had can will would
    should could into when then than there their them they what which while where who why how
    also only just some any all one two use used using get set see like make made does did
    """.split()
)
"""Words that carry no localisation signal even when written as code."""
RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))


def offline_keywords(issue: str, limit: int = 20) -> tuple[list[str], list[str]]:
    """(methods, string_literals) found in `issue`, each ranked and cut at `limit`."""
    text = URL.sub(" ", issue)
    return _rank_methods(text)[:limit], _rank_literals(text)[:limit]


def is_method_name(name: str) -> bool:
    """A name a method can bind: an identifier, no keyword, no dunder, not a builtin."""
    return (
        name.isidentifier()
        and name not in RESERVED
        and not (name.startswith("__") and name.endswith("__"))
        and name.isascii()
    )


def _rank_methods(text: str) -> list[str]:
    scores: dict[str, int] = {}
    first: dict[str, int] = {}

    def add(name: str, score: int, pos: int) -> None:
        if score <= 0 or len(name) < 3 or name.lower() in NOISE or not is_method_name(name):
            return
        scores[name] = scores.get(name, 0) + score
        first[name] = min(first.get(name, pos), pos)

    fences = [(m.start(), m.end()) for m in FENCE.finditer(text)]
    inline = [(m.start(), m.end()) for m in BACKTICK.finditer(text) if not _inside(m.start(), fences)]
    quoted = [(m.start(), m.end()) for m in QUOTED.finditer(text)]
    for match in DOTTED.finditer(text):
        start, end = match.span()
        if text[start - 1 : start] in PATH_CHARS or text[end : end + 1] in PATH_CHARS or _inside(start, quoted):
            continue  # a path component, a hyphenated word or text of a string literal
        dotted = match.group()
        shaped = _code_shaped(dotted)
        score = SHAPE_SCORE if shaped else 0
        # Inline code names a thing; a fenced block (logs, tracebacks) only counts what looks like code.
        if _inside(start, inline) or (shaped and _inside(start, fences)):
            score += CODE_SCORE
        if text[end : end + 1] == "(":
            score += CALL_SCORE
        add(dotted.rsplit(".", 1)[-1], score, start)
    for match in FRAME.finditer(text):
        add(match.group(1), FRAME_SCORE, match.start(1))
    return sorted(scores, key=lambda n: (-scores[n], first[n], n))


def _rank_literals(text: str) -> list[str]:
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for match in QUOTED.finditer(text):
        value = match.group(2)
        if not _plausible_literal(value):
            continue
        counts[value] = counts.get(value, 0) + 1
        first.setdefault(value, match.start())
    return sorted(counts, key=lambda v: (-counts[v], first[v], v))


def _plausible_literal(value: str) -> bool:
    stripped = value.strip()
    return (
        len(stripped) >= 2
        and stripped == value
        and any(c.isalpha() for c in value)
        and "/" not in value
        and "\\" not in value
        and not VERSION.fullmatch(value)
    )


def _code_shaped(dotted: str) -> bool:
    """snake_case, camelCase (a capital after the first letter) or a dotted path: not a prose word."""
    name = dotted.rsplit(".", 1)[-1]
    return "." in dotted or "_" in name.strip("_") or any(c.isupper() for c in name[1:])


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= pos < end for start, end in spans)
