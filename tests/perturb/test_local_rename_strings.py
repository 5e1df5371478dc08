"""local-rename leaves alone the locals a string names for an API that reads them from the caller's frame
(real pandas: `DataFrame.query`'s `@name`, `pandas.eval`'s expressions)."""

from __future__ import annotations

import pandas as pd
import pytest

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.engine import PassSpec, transform_source
from repoanchor.perturb.results import Applied, Skipped

SOURCE = '''\
import pandas as pd


def cheap(frame, limit):
    cutoff = limit * 2
    picked = frame.query("price < @cutoff")
    return list(picked["price"])


def doubled(frame):
    total = frame["price"].sum()
    scale = 3
    return float(pd.eval("total * 2")) + scale


def plain(frame):
    """cutoff, in prose, names no local: renaming it is safe."""
    cutoff = 5
    message = "cutoff must be positive"
    table = {"cutoff": cutoff}  # a bare name: a key, not an expression
    return cutoff, message, table["cutoff"]
'''


def _renamed() -> tuple[str, set[str], dict[str, str]]:
    result = transform_source(
        SOURCE.encode(), "q.py", [PassSpec("local-rename", ())], seed=0, fraction=1.0, project=ProjectInfo()
    )
    applied = {site.where for o in result.outcomes if isinstance(o, Applied) for site in o.sites}
    skipped = {o.where: o.reason for o in result.outcomes if isinstance(o, Skipped)}
    return result.new_source.decode(), applied, skipped


def _load(source: str) -> dict:
    namespace: dict = {"__name__": "q"}
    exec(compile(source, "q.py", "exec"), namespace)
    return namespace


def test_a_local_a_string_names_is_kept_and_the_others_renamed():
    _, applied, skipped = _renamed()
    assert skipped["cheap/Name#1"].startswith('named in a string: "price < @cutoff"')
    assert skipped["doubled/Name#1"].startswith('named in a string: "total * 2"')
    assert applied == {"cheap/Name#2", "doubled/Name#2", "plain/Name#1", "plain/Name#2", "plain/Name#3"}


@pytest.mark.parametrize(("function", "arguments"), [("cheap", (4,)), ("doubled", ()), ("plain", ())])
def test_the_renamed_module_answers_as_the_original(function: str, arguments: tuple):
    frame = pd.DataFrame({"price": [1, 5, 7, 12]})
    renamed, _, _ = _renamed()
    assert _load(renamed)[function](frame, *arguments) == _load(SOURCE)[function](frame, *arguments)
