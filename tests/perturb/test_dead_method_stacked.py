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


SHELL = '''def as_interface(obj):
    class Shell:
        """A callable-holding shell."""

    for name, impl in obj.items():
        setattr(Shell, name, staticmethod(impl))
    return Shell


class Full:
    def get(self):
        return 1
'''


@pytest.mark.parametrize(
    "before", [["dead-code"], ["if-true-wrap", "dead-code"], ["dead-code", "try-reraise-wrap", "dead-string-assign"]]
)
def test_a_class_empty_as_written_stays_refused_after_earlier_passes_filled_it(before):
    """SQLAlchemy 2.1.9's all-14 stack: dead-code had put a dead `if` in `as_interface`'s docstring-only shell,
    dead-method then saw a body and added a public method, which `test_dict` found among the shell's names."""
    passes = [*(PassSpec(name, ("probe",)) for name in before), PassSpec("dead-method", ("probe",))]
    result = transform_source(SHELL.encode(), "m.py", passes, seed=0, fraction=1.0)
    output = result.new_source.decode()
    shell = output[output.index("class Shell") : output.index("for name")]
    assert "if " in shell, "dead-code left the shell as written: nothing to show"
    assert "def probe" not in shell
    assert "def probe" in output[output.index("class Full") :]  # the class with a body still gets its method
    skips = [o.reason for o in result.outcomes if getattr(o, "transform", "") == "dead-method" and hasattr(o, "reason")]
    assert any(reason.startswith("empty body") for reason in skips), skips
    namespace: dict = {}
    exec(compile(output, "m.py", "exec"), namespace)
    made = namespace["as_interface"]({"foo": len})
    assert {name for name in dir(made) if not name.startswith("_")} == {"foo"}


def test_a_class_copied_by_an_earlier_pass_is_matched_by_name():
    """while-unroll copies a loop's body, class and all: the classes no longer pair one to one with the file as
    written, and each copy of a class empty as written is refused by its name."""
    source = 'def f(n):\n    while n > 0:\n        class Marker:\n            """A marker."""\n        n -= 1\n'
    passes = [PassSpec("while-unroll"), PassSpec("dead-code"), PassSpec("dead-method", ("probe",))]
    result = transform_source(source.encode(), "m.py", passes, seed=0, fraction=1.0)
    output = result.new_source.decode()
    assert output.count("class Marker") == 2, output
    assert output.count("if ") >= 2, output
    assert "def probe" not in output
    reasons = [getattr(o, "reason", "") for o in result.outcomes if o.transform == "dead-method"]
    assert reasons.count("empty body: only pass, ... or a docstring") == 2, reasons
