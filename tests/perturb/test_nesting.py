"""No pass nests more than 19 blocks in one scope: parso (jedi, IPython) reports the 20th, counting `if` too.

parso's tests parse parso's own source and expect no error; the 14 SPTs stacked at phi = 1.0 wrapped blocks
inside blocks until 20 of its files held a scope 20 blocks deep."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.nesting import MAX_NESTED, TOO_DEEP, scope_depths


def _nested(levels: int, name: str = "deep") -> str:
    """A function whose innermost statement sits inside `levels` nested `if`/`for` blocks, each 5+ lines long."""
    lines, indent = [f"def {name}(items):", "    total = 0"], "    "
    for level in range(levels):
        head = f"if items and {level} < len(items):" if level % 2 else f"for _{level} in items:"
        lines += [f"{indent}{head}"]
        indent += "    "
        lines += [f"{indent}total {op} {value}" for op, value in (("+=", level), ("-=", level), ("+=", 1), ("-=", 1))]
    lines += [f"{indent}total += 100", "    return total", ""]
    return "\n".join(lines)


SHALLOW = """
def shallow(items):
    total = 0
    for item in items:
        if item and total >= 0:
            total += item
            total -= 1
            total += 1
            total *= 1
            total += 0
    return total
"""


def test_depths_are_counted_per_scope_as_parso_counts_them():
    source = textwrap.dedent("""
        if a:
            pass
        elif b:
            for x in y:
                try:
                    pass
                except E:
                    with c:
                        pass
                finally:
                    pass
        else:
            match x:
                case 1:
                    while d:
                        pass

        class K:
            if e:
                def f(self):
                    if g:
                        pass
    """)
    depths = scope_depths(cst.parse_module(source))
    # elif is the same `if`; except and finally belong to their `try`; match is not a block; a def starts afresh
    assert depths == {"<module>": 4, "K": 1, "K.f": 1}


@pytest.mark.parametrize("transform", ["if-true-wrap", "try-reraise-wrap", "dead-code", "and-split", "for-to-while"])
def test_a_pass_leaves_a_scope_within_the_limit_and_wraps_the_shallow_ones(transform):
    source = _nested(MAX_NESTED) + SHALLOW  # as deep as parso allows
    result = transform_source(source.encode(), "pkg/mod.py", [PassSpec(transform)], fraction=1.0)
    output = cst.parse_module(result.new_source)
    assert max(scope_depths(output).values()) <= MAX_NESTED
    refused = [o for o in result.outcomes if getattr(o, "reason", "") == TOO_DEEP]
    assert refused
    assert all(o.where.startswith("deep/") for o in refused)
    applied = [site.where for o in result.outcomes for site in getattr(o, "sites", ())]
    assert not any(where.startswith("deep/") for where in applied)
    assert any(where.startswith("shallow/") for where in applied)
