"""Each file is proven in its own world: what astroid learnt from one file never types another's operand,
and no file's astroid tree outlives its pass."""

from __future__ import annotations

import gc

from astroid import nodes as an

from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Skipped

SETS_SYS = b"import sys\n\nsys.tick_limit = 3\n\n\ndef grow(n):\n    return n + 1\n"
USES_SYS = b"import sys\n\n\ndef budget():\n    return sys.tick_limit + 2\n"
OWN = b"import sys\n\nsys.tick_limit = 3\n\n\ndef budget():\n    return sys.tick_limit + 2\n"


def _verdicts(source: bytes, path: str) -> list[tuple[str, str]]:
    result = transform_source(source, path, [PassSpec("operand-permute")], fraction=1.0)
    return [(o.kind, getattr(o, "reason", "")) for o in result.outcomes if isinstance(o, Applied | Skipped)]


def test_an_attribute_set_on_a_stdlib_module_types_nothing_in_another_file():
    alone = _verdicts(USES_SYS, "pkg/uses.py")
    _verdicts(SETS_SYS, "pkg/sets.py")  # before: astroid recorded sys.tick_limit on its cached sys module
    after = _verdicts(USES_SYS, "pkg/uses.py")
    assert after == alone == [("skipped", "uninferable operand: sys.tick_limit"), ("skipped", "no candidate sites")]


def test_a_file_sees_no_attribute_it_sets_on_a_stdlib_module():
    """Recorded on its own definitions only: sys is not the file's, so sys.tick_limit stays unproven."""
    expected = [("skipped", "uninferable operand: sys.tick_limit"), ("skipped", "no candidate sites")]
    assert _verdicts(OWN, "pkg/own.py") == expected


def _file_trees() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, an.Module) and o.name == "")


def test_file_trees_do_not_accumulate():
    def source(i: int) -> bytes:
        return (
            f"import sys\n\nsys.mark_{i} = {i}\nLIMIT = {i}\n\n\nclass Box{i}:\n"
            f"    def __init__(self):\n        self.size = {i}\n\n    def grown(self):\n"
            f"        return self.size + LIMIT\n"
        ).encode()

    for i in range(3):
        _verdicts(source(i), f"pkg/m{i}.py")
    few = _file_trees()
    for i in range(3, 40):
        _verdicts(source(i), f"pkg/m{i}.py")
    assert _file_trees() <= few


def test_a_foreign_star_import_refuses_the_file_after_a_stdlib_one():
    source = b"from math import *\nfrom .shapes import *\n\nLIMIT = 3\n\n\ndef grow():\n    return LIMIT + 1\n"
    assert _verdicts(source, "pkg/stars.py") == [
        ("skipped", "uninferable operand: a star-import from shapes may rebind any name"),
        ("skipped", "no candidate sites"),
    ]
