"""may_introspect: False only for text in which introspection_in can find nothing, so a collector may skip the walk."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from repoanchor.perturb.transform_checks import (
    FRAME_ATTRS,
    FRAME_INTROSPECTION_ATTRS,
    INTROSPECTION_CALLS,
    introspection_in,
    may_introspect,
)
from tests.support.modules import repository_sources

SOURCES = repository_sources()
FOUND = [
    "def f():\n    return locals()\n",
    "def f(x):\n    return eval (x)\n",
    "import sys\ndef f():\n    return (sys.  # a comment between\n        _getframe(1).f_locals)\n",
    "def f(frame):\n    return frame.f_back\n",
    "import inspect\ndef f():\n    return inspect.stack()\n",
]


@pytest.mark.parametrize("code", FOUND)
def test_text_whose_introspection_is_found_may_introspect(code: str):
    assert introspection_in(cst.parse_module(code)) is not None
    assert may_introspect(code)


@pytest.mark.parametrize("word", sorted(INTROSPECTION_CALLS | FRAME_INTROSPECTION_ATTRS | FRAME_ATTRS))
def test_each_word_counts_and_a_longer_name_does_not(word: str):
    assert may_introspect(f"x = {word}\n")
    assert not may_introspect(f"x = my_{word}2\n")


def test_unknown_text_may_introspect():
    assert may_introspect(None)


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.name)
def test_no_word_means_nothing_found(path: Path):
    code = path.read_text()
    if not may_introspect(code):
        assert introspection_in(cst.parse_module(code)) is None
