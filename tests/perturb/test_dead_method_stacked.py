"""dead-method after the transforms that put a class's methods in blocks (if-true-wrap, try-reraise-wrap) and
dead-string-assign's strings in them: a method in a block is a member by its name, not by every word of its body
(dead-method had refused every keyword, "probe already defined", so all 17 stacked added no method)."""

from __future__ import annotations

import libcst as cst
import pytest

from repoanchor.perturb.class_lineage import members_of
from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied

BOX = """class Box:
    def get(self, v):
        a = v + 1
        b = a + 1
        c = b + 1
        return c
"""


@pytest.mark.parametrize("wrap", ["if-true-wrap", "try-reraise-wrap"])
def test_dead_method_adds_its_method_after_the_body_was_wrapped(wrap):
    passes = [PassSpec(wrap), PassSpec("dead-string-assign", ("probe",)), PassSpec("dead-method", ("probe",))]
    result = transform_source(BOX.encode(), "m.py", passes, seed=0, fraction=1.0)
    applied = {o.transform for o in result.outcomes if isinstance(o, Applied)}
    assert applied == {wrap, "dead-string-assign", "dead-method"}, result.outcomes
    namespace: dict = {}
    exec(compile(result.new_source, "m.py", "exec"), namespace)
    assert namespace["Box"]().get(1) == 4


def test_members_read_through_class_level_blocks():
    body = """class Box:
    if True:
        def get(self, v):
            x = "probe"
            return v
    elif cond:
        def alt(self): pass
    try:
        def put(self): pass
    except Exception as err:
        raise
    else:
        size = 3
    finally:
        other = 1
    for k in range(3):
        pass
    with ctx() as c:
        w = 1
    if y: z = 2
    limit = 5
"""
    members = members_of(cst.parse_module(body).body[0])
    assert {"get", "alt", "put", "err", "size", "other", "k", "c", "w", "z", "limit", "cond", "y"} <= members
    assert not {"probe", "x", "v", "self"} & members  # words inside a method's body are not members
