"""The per-file engine: failing passes are rolled back and reported, others still apply;
site selection honours phi; outcomes are typed and counted."""

from __future__ import annotations

import pytest

from repoanchor.perturb.engine import PassSpec, select_sites, transform_source
from repoanchor.perturb.results import (
    SNIPPET_CHARS,
    Applied,
    Failed,
    Skipped,
    outcome_from_dict,
    outcome_to_dict,
    snippet,
    summarize,
)
from repoanchor.perturb.sites import Site

SRC = b"def f(a, b):\n    if a < 0:\n        return a\n    return b\n"
BROKEN = "tests.perturb.broken_transforms"


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (f"{BROKEN}.RenameToKeyword", "output does not compile, rolled back"),
        (f"{BROKEN}.Crashes", "RuntimeError: boom"),
        (f"{BROKEN}.Silent", "code changed but no site was reported"),
    ],
)
def test_a_failing_pass_is_rolled_back_and_the_others_apply(broken: str, message: str):
    result = transform_source(SRC, "m.py", [PassSpec(broken), PassSpec("comparison-swap")], fraction=1.0)
    failed = [o for o in result.outcomes if isinstance(o, Failed)]
    assert len(failed) == 1
    assert message in failed[0].error
    assert result.new_source == SRC.replace(b"a < 0", b"0 > a")
    assert [type(o) for o in result.outcomes] == [Failed, Applied]


@pytest.mark.parametrize(("fraction", "n", "expected"), [(1.0, 10, 10), (0.7, 10, 7), (0.7, 1, 1), (0.01, 5, 1)])
def test_select_sites_takes_ceil_phi_n_at_least_one(fraction: float, n: int, expected: int):
    import random

    import libcst as cst

    sites = [Site(cst.Name(f"x{i}"), f"s{i}") for i in range(n)]
    chosen = select_sites(sites, fraction, random.Random(0))
    assert len(chosen) == expected
    assert [s.where for s in chosen] == sorted((s.where for s in chosen), key=lambda w: int(w[1:]))


def test_unparseable_file_skips_every_pass_with_the_parser_message():
    result = transform_source(b"def f(:\n", "m.py", [PassSpec("comparison-swap"), PassSpec("if-else-swap")])
    assert result.new_source is None
    assert [o.reason.split(":")[0] for o in result.outcomes] == ["unparseable", "unparseable"]
    assert all(isinstance(o, Skipped) for o in result.outcomes)


def test_summary_counts_every_outcome():
    outcomes = transform_source(
        SRC, "m.py", [PassSpec("comparison-swap"), PassSpec(f"{BROKEN}.Crashes")], fraction=1.0
    ).outcomes
    summary = summarize(outcomes)
    assert summary["comparison-swap"]["sites_applied"] == 1
    assert summary["crashes"]["failed"] == 1


def test_latin1_declared_encoding_round_trips_bytes():
    src = "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\nif len(s) < 9:\n    pass\nx = 1 if s < 'z' else 2\n".encode(
        "latin-1"
    )
    result = transform_source(src, "m.py", [PassSpec("comparison-swap")], fraction=1.0)
    assert result.new_source is not None
    assert "'z' > s".encode("latin-1") in result.new_source
    assert "caf\xe9".encode("latin-1") in result.new_source


def test_outcomes_round_trip_through_their_json_form():
    passes = [PassSpec("comparison-swap"), PassSpec(f"{BROKEN}.Crashes"), PassSpec("while-unroll")]
    outcomes = transform_source(SRC, "m.py", passes, fraction=1.0).outcomes
    assert {type(o) for o in outcomes} == {Applied, Failed, Skipped}
    assert [outcome_from_dict(outcome_to_dict(o)) for o in outcomes] == outcomes


@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_cyclic_collector_waits_for_the_file_and_is_restored(enabled_before: bool):
    import gc

    from tests.perturb.broken_transforms import LeavesCycle

    LeavesCycle.seen.clear()
    (gc.enable if enabled_before else gc.disable)()
    try:
        result = transform_source(SRC, "m.py", [PassSpec(f"{BROKEN}.LeavesCycle")], fraction=1.0)
        assert gc.isenabled() is enabled_before
    finally:
        gc.enable()
    assert [type(o) for o in result.outcomes] == [Failed]
    [(enabled_during, cycle)] = LeavesCycle.seen
    assert enabled_during is False
    gc.collect()
    assert cycle() is None  # nothing the pass left behind outlives a collection


@pytest.mark.parametrize("transform", ["dead-code", "if-true-wrap", "try-reraise-wrap"])
def test_block_passes_apply_to_a_file_ending_in_a_block_without_a_newline(transform: str):
    """The file's last newline is dropped inside the last block's last statement: its span must still count
    (this once failed every block pass over such a file with an IndexError)."""
    src = b"def f(x):\n    for i in x:\n        a = 1\n        b = 2\n        c = 3\n        d = 4\n"
    src += b"        if a:\n            g(a)"
    result = transform_source(src, "m.py", [PassSpec(transform)], fraction=1.0)
    assert [type(o) for o in result.outcomes] == [Applied]
    assert not result.new_source.endswith(b"\n")
    compile(result.new_source, "m.py", "exec")


LONG_BODY = "def f(a):\n" + "".join(f"    v{i} = a + {i}\n" for i in range(40)) + "    return v39\n"


@pytest.mark.parametrize("indent", ["    ", "\t"], ids=["spaces", "tabs"])
def test_a_long_block_sites_snippets_show_its_head_and_tail_in_whole_lines(indent: str):
    """Under the default indentation a site is rendered whole from the file's kept statements and bounded by
    `snippet`; under any other its long blocks are abbreviated first. Either way head and tail are lines of
    the output (the inserted dead statement first, the block's last statement last)."""
    result = transform_source(
        LONG_BODY.replace("    ", indent).encode(), "m.py", [PassSpec("dead-code")], seed=1, fraction=1.0
    )
    (site,) = [site for o in result.outcomes if isinstance(o, Applied) for site in o.sites]
    output_lines = {line.strip() for line in result.new_source.decode().splitlines()}  # snippets indent by 4
    for code in (site.before, site.after):
        lines = code.splitlines()
        assert len(code) <= SNIPPET_CHARS + len("\n...\n")
        assert "..." in [line.strip() for line in lines]
        assert lines[-1].strip() == "return v39"
        assert all(line.strip() in output_lines for line in lines if line.strip() != "...")
    assert site.after.splitlines()[0].lstrip().startswith("if ")
    assert site.before.splitlines()[0].strip() == "v0 = a + 0"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("x = 1", "x = 1"),
        ("\n".join(f"line_{i:03d} = {i}" for i in range(100)), None),
        ("y" * 1000, "y" * 200 + "\n...\n" + "y" * 200),
    ],
    ids=["short", "many-lines", "one-long-line"],
)
def test_snippets_cut_long_code_at_line_ends(code: str, expected: str | None):
    excerpt = snippet(code)
    if expected is not None:
        assert excerpt == expected
        return
    head, tail = excerpt.split("\n...\n")
    lines = code.splitlines()
    assert head.splitlines() == lines[: len(head.splitlines())]
    assert tail.splitlines() == lines[-len(tail.splitlines()) :]
    assert len(head) <= SNIPPET_CHARS // 2
    assert len(tail) <= SNIPPET_CHARS // 2


@pytest.mark.parametrize("source", [b"x = 1\nif x:\n    y = 2\n", b"x = 1\n"])
def test_the_final_tree_is_returned_only_when_asked_for(source: bytes):
    """The tree a tree transform would read; otherwise dropped before the collector runs again."""
    passes = [PassSpec("if-true-wrap")]
    assert transform_source(source, "m.py", passes, fraction=1.0).module is None
    kept = transform_source(source, "m.py", passes, fraction=1.0, keep_tree=True)
    assert kept.module.bytes == (kept.new_source or source)
