"""The project's own words, for the names RepoMirage perturbations create (proxies, hidden modules, decoys).

A generated module called ``_font_stack_config.py`` in a functional-programming library stands out
at a glance; one made of words the project already uses (``_curry_merge_sorted.py`` in toolz) does
not. Words come from the identifiers (NAME tokens, never comments or strings) of the project's own
source files (as `tokenize` finds them, in one faster scan), split at underscores and case changes.
Words that would reveal a file's role (``proxy``, ``decoy``, ``hidden``, ``real``, ``impl``...) are
left out, even when the project uses them. A project too small to give `MIN_WORDS` words gets None,
and callers keep their generic vocabularies: a handful of words would make two seeds draw the same
names. Where a name should still say what it holds (a forwarder's ``loader``, a dict of
``defaults``), `fitting` prefers the project's words among those that say so.
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from collections.abc import Iterable
from pathlib import Path

from repoanchor.perturb.naming import words_avoiding

MIN_WORDS = 40
MIN_FITTING = 3
"""Fewer fitting words than this, and every name would end in the same word: a marker across seeds."""
MAX_FILES = 400
"""Files read, evenly spread over the sorted list: enough words from any large project, in bounded time."""
GIVEAWAYS = frozenset(
    {
        "conftest", "decoy", "decoys", "dummy", "fake", "forward", "forwarder", "forwarding", "hidden", "hide",
        "impl", "implementation", "mask", "masked", "masking", "mirage", "original", "perturb", "perturbed",
        "proxies", "proxy", "real", "repoanchor", "shadow", "stub", "test", "tests", "variant",
    }
)  # fmt: skip
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def words_of_identifier(name: str) -> list[str]:
    """``parseHTTPHeader_v2`` -> ``parse``, ``http``, ``header``: lower-case alphabetic parts."""
    return [part.lower() for chunk in name.split("_") for part in _PART.findall(chunk)]


def project_vocabulary(root: Path, files: list[str]) -> tuple[str, ...] | None:
    """Sorted words of 3 to 12 letters from the identifiers of `files` (relative to `root`), or None."""
    step = max(1, len(files) // MAX_FILES)
    words: set[str] = set()
    for rel in sorted(files)[::step]:
        for name in _identifiers(root / rel):
            words.update(w for w in words_of_identifier(name) if 3 <= len(w) <= 12)
    usable = sorted(w for w in words - GIVEAWAYS if not keyword.iskeyword(w))
    return tuple(usable) if len(usable) >= MIN_WORDS else None


def avoiding(vocabulary: tuple[str, ...] | None, absent: frozenset[str]) -> tuple[str, ...] | None:
    """`vocabulary` less the words holding a word some test expects absent from an output (`ProjectInfo.absent_words`:
    ``no_fnmatch_line("*line*")`` and ``pipeline``), or None if too few words are left: the transforms then draw
    from their generic vocabularies, which do not avoid those words (a project that small rarely has such a test)."""
    if vocabulary is None or not absent:
        return vocabulary
    kept = words_avoiding(vocabulary, absent)
    return kept if len(kept) >= MIN_WORDS else None


def fitting(vocabulary: tuple[str, ...], wanted: Iterable[str]) -> tuple[str, ...]:
    """The project's words among `wanted` (``path``, ``source``...), or all its words if it has too few of them."""
    known = set(vocabulary)
    chosen = tuple(sorted({word for word in wanted if word in known}))
    return chosen if len(chosen) >= MIN_FITTING else vocabulary


def _identifiers(path: Path) -> set[str]:
    try:
        source = path.read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
    except (OSError, SyntaxError, LookupError, UnicodeDecodeError):
        return set()  # an unreadable file gives no words; the others are enough
    names = {found.group() for found in _TOKENS.finditer(text) if found.lastgroup == "name"}
    return {
        name
        for name in names
        if not keyword.iskeyword(name) and not (name.startswith("__") and name.endswith("__"))  # Python's words
    }


_TOKENS = re.compile(
    r"""
    (?P<string>[rRbBuUfF]{0,2}
        (?:'''(?:[^\\]|\\[\s\S])*?'''|\"\"\"(?:[^\\]|\\[\s\S])*?\"\"\"|'(?:[^'\\\n]|\\[\s\S])*'|"(?:[^"\\\n]|\\[\s\S])*"))
    |(?P<comment>\#[^\r\n]*)
    |(?P<number>(?:\d|\.\d)(?:[\w.]|(?<=[eE])[+-])*)
    |(?P<name>\w+)
    """,
    re.VERBOSE,
)
"""The NAME tokens of Python's tokenizer, found in one regular-expression scan (`tokenize` is pure Python: 5 s of
every SymPy variant). Strings (any prefix; f-strings whole, as 3.11's tokenizer reads them), comments and numbers
(``1e-5``, ``0x1f``) are matched first, so that no letter inside them reads as a name. The same names as `tokenize`
on 17,508 files (SymPy, the standard library, SWE-bench projects); a file `tokenize` rejects (an unterminated
triple-quoted string, unbalanced brackets) gave no words and now gives its names."""
