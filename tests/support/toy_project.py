"""A small multi-module project with candidate sites for every SPT, its own tests, and test-like
files in every default test location, for sampler tests that need speed more than realism."""

from __future__ import annotations

from pathlib import Path

MODULE = '''"""Module {i}: small helpers."""


def clamp_{i}(value, low, high):
    """Clamp value into [low, high]."""
    if value < low:
        return low
    elif value > high:
        return high
    else:
        return value


def total_{i}(items):
    result = 0
    for item in items:
        if item > 0 and item % 2 == 0:
            result = result + item * 2
        else:
            result += 1
    count = 0
    while count < 3:
        count += 1
    label = "total of items"
    return result + count, label


def describe_{i}(name):
    prefix = "name: "
    message = prefix + name
    if not name:
        message = "anonymous"
    first = message[0] if message else ""
    last = message[-1] if message else ""
    middle = len(message) - 2
    return message, first, last, middle


class Shape{i}:
    def __init__(self, width, height):
        self.width = width
        self.height = height

    def area(self):
        return self.width * self.height

    def scaled(self, factor):
        size = self.width * factor
        other = self.height * factor
        return Shape{i}(size, other)
'''

TEST = """import importlib

import pytest


@pytest.mark.parametrize("i", range({n}))
def test_module(i):
    mod = importlib.import_module(f"pkg.m{{i}}")
    assert getattr(mod, f"clamp_{{i}}")(5, 0, 3) == 3
    assert getattr(mod, f"clamp_{{i}}")(-1, 0, 3) == 0
    assert getattr(mod, f"clamp_{{i}}")(2, 0, 3) == 2
    assert getattr(mod, f"total_{{i}}")([1, 2, 4, -3]) == (17, "total of items")
    assert getattr(mod, f"describe_{{i}}")("ab") == ("name: ab", "n", "b", 6)
    shape = getattr(mod, f"Shape{{i}}")(2, 3).scaled(2)
    assert shape.area() == 24
"""

TEST_LIKE = {
    "conftest.py": "# conftest: never transformed\nif 1 < 2:\n    X = 1\nelse:\n    X = 2\n",
    "pkg/tests/test_inner.py": "def test_inner():\n    if 1 < 2:\n        assert 1\n    else:\n        assert 0\n",
    "pkg/testing/helpers.py": "def helper(a, b):\n    if a < b:\n        return a\n    else:\n        return b\n",
    "pkg/util_test.py": "def check(a, b):\n    while a < b:\n        a += 1\n    return a\n",
}


def write_toy_project(root: Path, modules: int = 6) -> Path:
    """pkg/m0..m{modules-1}.py, pkg/__init__.py, tests/test_toy.py and the TEST_LIKE files."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text('"""The toy package."""\n')
    for i in range(modules):
        (root / "pkg" / f"m{i}.py").write_text(MODULE.format(i=i))
    (root / "tests").mkdir()
    (root / "tests" / "test_toy.py").write_text(TEST.format(n=modules))
    for rel, text in TEST_LIKE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "README.md").write_text("toy\n")
    return root
